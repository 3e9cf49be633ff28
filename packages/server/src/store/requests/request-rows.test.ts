import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DecodedPage, pagesFromBatch } from './request-pages.js';
import type { NewRequestRecord, RequestRecord } from './request-records.js';
import {
  fromRow,
  hex8,
  idSuffix,
  newIdParts,
  newRequestId,
  packRecords,
  PACKED_COLUMNS,
  REQUEST_COLUMNS,
  storedRecord,
  toRow,
  toRows,
  type PackedBatch,
} from './request-rows.js';

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

/**
 * The records of a packed batch as the writer thread stores them (cloned, its values' buffer
 * transferred, then paged), read back.
 */
function unpack(packed: PackedBatch): RequestRecord[] {
  const count = packed.values.length / PACKED_COLUMNS.length;
  const received = structuredClone(packed, { transfer: [packed.values.buffer] });
  assert.equal(packed.values.length, 0, 'the values moved rather than being copied');
  return pagesFromBatch(received, newIdParts(count)).flatMap((page) => new DecodedPage(page).records());
}

describe('packed inspector records, read back from their pages', () => {
  it('carry every column but id, normalised exactly as toRows does', () => {
    assert.deepEqual([...PACKED_COLUMNS, 'id'].sort(), [...REQUEST_COLUMNS].sort());
    const records = [record('/a'), record('/b', { tunnelId: undefined, host: 'other.localhost', timestamp: 1_750_000_000_999 })];
    const expected = toRows(records).map((row) => {
      const { id: _id, ...rest } = fromRow(row);
      return rest;
    });
    const rows = unpack(packRecords(records));
    assert.equal(rows.length, 2);
    for (const [i, row] of rows.entries()) {
      const { id, ...rest } = row;
      assert.deepEqual(rest, expected[i]);
      // Ids sort by time: the record's own millisecond in 12 hex digits, then 16 random hex.
      assert.match(String(id), new RegExp(`^req_${Math.floor(records[i]!.timestamp).toString(16).padStart(12, '0')}[0-9a-f]{16}$`));
    }
    assert.notEqual(rows[0]!.id, rows[1]!.id);
  });

  it('carry each distinct string of a batch once, and keep NULL apart from every string', () => {
    const records = [
      record('/same'),
      record('/same', { tunnelId: undefined }),
      record('/other', { userAgent: 'acc_rows', ip: '', method: 'GET' }),
    ];
    const packed = packRecords(records);
    assert.deepEqual(
      [...packed.strings].sort(),
      ['', '/other', '/same', 'GET', 'HTTP/2.0', 'POST', '203.0.113.9', 'acc_rows', 'curl/8', 'rows.example.com', 'tun_rows'].sort(),
    );
    const rows = unpack(packed);
    assert.deepEqual(
      rows.map((row) => [row.tunnelId, row.path, row.ip, row.userAgent, row.method]),
      [
        ['tun_rows', '/same', '203.0.113.9', 'curl/8', 'POST'],
        [undefined, '/same', '203.0.113.9', 'curl/8', 'POST'],
        ['tun_rows', '/other', '', 'acc_rows', 'GET'],
      ],
    );
  });

  it('give every record of a batch its own id', () => {
    const records = Array.from({ length: 300 }, (_, i) => record(`/${i}`));
    const ids = new Set(unpack(packRecords(records)).map((row) => row.id));
    assert.equal(ids.size, 300);
  });

  it('give records of the same millisecond ids that sort in arrival order, across batches and both paths', () => {
    // All share one timestamp: only the id can order them newest first.
    const batches = [0, 1, 2].map((b) => Array.from({ length: 40 }, (_, i) => record(`/${b}/${i}`)));
    const ids = [
      ...unpack(packRecords(batches[0]!)).map((row) => row.id),
      ...toRows(batches[1]!).map((row) => row.id),
      ...unpack(packRecords(batches[2]!)).map((row) => row.id),
    ];
    assert.equal(new Set(ids).size, ids.length);
    assert.deepEqual([...ids].sort(), ids, 'text order is arrival order');
  });
});

describe('storedRecord', () => {
  it('is the record as a stored row reads back, key for key and in the same key order', () => {
    for (const over of [{}, { tunnelId: undefined }, { durationMs: -2, timestamp: 0.2 }]) {
      const built = storedRecord(record('/r', over), 'req_1');
      const viaRow = fromRow(toRow(record('/r', over), 'req_1'));
      assert.deepEqual(built, viaRow);
      assert.deepEqual(Object.keys(built), Object.keys(viaRow));
    }
  });
});

describe('request ids', () => {
  const hexByToString = (value: number, digits: number): string => value.toString(16).padStart(digits, '0');

  it('write a uint32 as the same 8 hex digits as Number#toString(16), at the edges and in between', () => {
    const values = [0, 1, 15, 16, 255, 256, 0x7fffffff, 0x80000000, 0xdeadbeef, 0xffffffff];
    for (let i = 0; i < 1000; i++) values.push(Math.floor(Math.random() * 2 ** 32));
    for (const value of values) assert.equal(hex8(value), hexByToString(value, 8), String(value));
    assert.equal(idSuffix(0x1234, 0xfedcba98), '00001234fedcba98');
  });

  it('carry the millisecond as 12 hex digits, for repeated and changing timestamps alike', () => {
    for (const timestamp of [1_750_000_000_123.7, 1_750_000_000_123.2, 1_750_000_000_124, 0, -5, 1_750_000_000_123.9]) {
      assert.equal(
        newRequestId(timestamp, 'ffffffff00000000'),
        `req_${hexByToString(Math.max(0, Math.floor(timestamp)), 12)}ffffffff00000000`,
        String(timestamp),
      );
    }
  });
});
