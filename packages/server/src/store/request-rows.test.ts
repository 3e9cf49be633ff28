import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NewRequestRecord } from './request-records.js';
import { forEachPackedRow, packRecords, PACKED_COLUMNS, REQUEST_COLUMNS, toRows } from './request-rows.js';
import type { RequestsTable } from './schema.js';

const record = (path: string, over: Partial<NewRequestRecord> = {}): NewRequestRecord => ({
  accountId: 'acc_rows',
  tunnelId: 'tun_rows',
  timestamp: 1_750_000_000_123.7,
  method: 'POST',
  path,
  status: 201,
  durationMs: 4.6,
  bytes: 77,
  ip: '203.0.113.9',
  userAgent: 'curl/8',
  proto: 'HTTP/2.0',
  host: 'Rows.Example.COM',
  ...over,
});

/** The rows forEachPackedRow binds, as objects keyed by the slot order it was given. */
function unpack(packed: unknown[], columns: Array<keyof RequestsTable>): Array<Record<string, unknown>> {
  const rows: Array<Record<string, unknown>> = [];
  forEachPackedRow(packed, columns, (parameters) => rows.push(Object.fromEntries(columns.map((c, i) => [c, parameters[i]]))));
  return rows;
}

describe('packed inspector records', () => {
  it('carry every column but id, normalised exactly as toRows does', () => {
    assert.deepEqual([...PACKED_COLUMNS, 'id'].sort(), [...REQUEST_COLUMNS].sort());
    const records = [record('/a'), record('/b', { tunnelId: undefined, host: 'other.localhost', timestamp: 1_750_000_000_999 })];
    const expected = toRows(records).map(({ id: _id, ...rest }) => rest);
    // A slot order unlike the table's, as a compiled INSERT may list columns in any order.
    const columns = [...REQUEST_COLUMNS].reverse();
    const rows = unpack(packRecords(records), columns);
    assert.equal(rows.length, 2);
    for (const [i, row] of rows.entries()) {
      const { id, ...rest } = row;
      assert.deepEqual(rest, expected[i]);
      // Ids sort by time: the record's own millisecond in 12 hex digits, then 16 random hex.
      assert.match(String(id), new RegExp(`^req_${Math.floor(records[i]!.timestamp).toString(16).padStart(12, '0')}[0-9a-f]{16}$`));
    }
    assert.notEqual(rows[0]!.id, rows[1]!.id);
  });

  it('give every record of a batch its own id', () => {
    const records = Array.from({ length: 300 }, (_, i) => record(`/${i}`));
    const ids = new Set(unpack(packRecords(records), [...REQUEST_COLUMNS]).map((row) => row.id));
    assert.equal(ids.size, 300);
  });
});
