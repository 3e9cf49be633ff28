import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DecodedPage, pageFromRecords, pagesFromRecords } from './request-pages.js';
import type { NewRequestRecord, RequestRecord } from './request-records.js';

const record = (path: string, over: Partial<NewRequestRecord> = {}): NewRequestRecord => ({
  accountId: 'acc_pages',
  tunnelId: 'tun_pages',
  timestamp: 1_750_000_000_000,
  method: 'GET',
  path,
  status: 200,
  durationMs: 1,
  bytes: 5,
  ip: '192.0.2.1',
  userAgent: 'pages',
  proto: 'HTTP/1.1',
  host: 'pages.localhost',
  ...over,
});

describe('inspector pages', () => {
  it('one page per account, keyed by its newest record (by id within a millisecond) and its oldest timestamp', () => {
    const pages = pagesFromRecords([
      record('/a1', { timestamp: 1_750_000_000_005 }),
      record('/b1', { accountId: 'acc_other' }),
      record('/a2', { timestamp: 1_750_000_000_009 }),
      record('/a3', { timestamp: 1_750_000_000_009 }),
      record('/a4', { timestamp: 1_750_000_000_002 }),
    ]);
    assert.deepEqual(
      pages.map((page) => [page.account_id, page.record_count]),
      [
        ['acc_pages', 4],
        ['acc_other', 1],
      ],
    );
    const [mine] = pages;
    const records = new DecodedPage(mine!).records();
    assert.deepEqual(
      records.map((r) => r.path),
      ['/a1', '/a2', '/a3', '/a4'],
      'records keep the batch order',
    );
    assert.equal(mine!.newest_ts, 1_750_000_000_009);
    assert.ok(records[2]!.id > records[1]!.id, 'the later of one millisecond has the larger id');
    assert.equal(mine!.newest_id, records[2]!.id);
    assert.equal(mine!.oldest_ts, 1_750_000_000_002);
    assert.deepEqual(
      JSON.parse(pages[1]!.strings).sort(),
      ['/b1', '192.0.2.1', 'GET', 'HTTP/1.1', 'acc_other', 'pages', 'pages.localhost', 'tun_pages'].sort(),
    );
  });

  it('read the same from bytes at any offset (a driver may hand back unaligned buffers)', () => {
    const [page] = pagesFromRecords([record('/x'), record('/y', { tunnelId: undefined })]);
    const shifted = (bytes: Buffer): Buffer => Buffer.concat([Buffer.alloc(3), bytes]).subarray(3);
    const moved = { ...page!, vals: shifted(page!.vals), id_parts: shifted(page!.id_parts) };
    assert.notEqual(moved.vals.byteOffset % 8, 0);
    assert.deepEqual(new DecodedPage(moved).records(), new DecodedPage(page!).records());
  });

  it('rewritten from records, a page keeps their ids; an id not made from its timestamp is refused', () => {
    const [page] = pagesFromRecords([record('/1'), record('/2', { timestamp: 1_750_000_000_001 })]);
    const records = new DecodedPage(page!).records();
    assert.deepEqual(new DecodedPage(pageFromRecords(records)).records(), records);
    const forged: RequestRecord = { ...records[0]!, timestamp: records[0]!.timestamp + 1 };
    assert.throws(() => pageFromRecords([forged]), /does not match its timestamp/);
    assert.throws(() => pageFromRecords([{ ...records[0]!, id: 'req_zz' }]), /does not match/);
    assert.throws(() => pageFromRecords([]), /at least one record/);
  });

  it('refuse a batch with a missing field, and a page of another format', () => {
    assert.throws(
      () => pagesFromRecords([record('/ok'), { ...record('/bad'), ip: undefined } as unknown as NewRequestRecord]),
      /record 1 has no ip/,
    );
    assert.throws(() => pagesFromRecords([{ ...record('/bad'), bytes: Number.NaN }]), /record 0 has no numeric bytes/);
    const [page] = pagesFromRecords([record('/v')]);
    assert.throws(() => new DecodedPage({ ...page!, format: 3 }), /format 3 is not readable/);
    assert.throws(() => new DecodedPage({ ...page!, record_count: 2 }), /for 2 records/);
  });

  it('keep the local target that served a record (routes), and read pages written before it as records without one', () => {
    const [page] = pagesFromRecords([record('/api/x', { target: 'localhost:4000' }), record('/')]);
    assert.equal(page!.format, 2);
    const records = new DecodedPage(page!).records();
    assert.equal(records[0]!.target, 'localhost:4000');
    assert.equal('target' in records[1]!, false, 'no target: the key is absent, as fromRow leaves it');
    // A format 1 page: the same values without the last (target) column of each record.
    const width = page!.vals.length / 8 / 2;
    const old = Buffer.alloc(2 * (width - 1) * 8);
    for (let row = 0; row < 2; row++) page!.vals.copy(old, row * (width - 1) * 8, row * width * 8, (row * width + width - 1) * 8);
    const formerly = new DecodedPage({ ...page!, format: 1, vals: old }).records();
    assert.deepEqual(
      formerly,
      records.map(({ target: _target, ...rest }) => rest),
    );
  });
});
