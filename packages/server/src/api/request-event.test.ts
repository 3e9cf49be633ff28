import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RequestRecord } from '../store/index.js';
import { RequestEvents, requestEvent } from './request-event.js';
import { capturedRequestItem } from './request-filters.js';

// The stream's hand-written encoding must be byte for byte what GET /v1/requests lists.

const base: RequestRecord = {
  id: 'req_0194665d4c00000004c5aeca1039',
  accountId: 'acc_1',
  tunnelId: 'tun_1',
  timestamp: Date.parse('2026-11-25T19:00:00.123Z'),
  method: 'GET',
  path: '/',
  status: 200,
  durationMs: 3,
  bytes: 100,
  ip: '127.0.0.1',
  userAgent: 'curl/8.5.0',
  proto: 'HTTP/1.1',
  host: 'app.localhost',
};

const expected = (record: RequestRecord): string =>
  `event: request\nid: ${record.id}\ndata: ${JSON.stringify(capturedRequestItem(record))}\n\n`;

describe('requestEvent', () => {
  const cases: Array<[string, Partial<RequestRecord>]> = [
    ['a plain record', {}],
    ['no tunnel record', { tunnelId: undefined }],
    ['fractions rounded as the list rounds them', { durationMs: 2.5, bytes: 1023.4, timestamp: base.timestamp + 0.7 }],
    ['a visitor who left before the response', { status: 0, bytes: 0 }],
    ['text that JSON must escape', { path: '/a"b\\c\n\t\u0001/é/𝄞?q=<script>', userAgent: 'x\u2028y "quoted"', method: 'PROPFIND' }],
    ['a lone surrogate', { path: '/\ud800', userAgent: '\udfff' }],
    ['the epoch and far future', { timestamp: 0 }],
    ['large sizes', { bytes: 2 ** 53 - 1, durationMs: 86_400_000 }],
    ['a user agent longer than the cached ones', { userAgent: 'Mozilla/5.0 "x" '.repeat(40) }],
  ];
  for (const [name, over] of cases) {
    it(name, () => {
      const record = { ...base, ...over };
      assert.equal(requestEvent(record), expected(record));
    });
  }

  it('records in a row that share strings and a millisecond each get their own values', () => {
    const records = Array.from({ length: 80 }, (_, i) => ({ ...base, host: `h${i % 70}.localhost`, timestamp: base.timestamp + (i >> 2) }));
    for (const record of records) assert.equal(requestEvent(record), expected(record));
  });

  it('RequestEvents encodes a published list once and never serves one list the events of another', () => {
    const events = new RequestEvents();
    const first = [base, { ...base, id: 'req_2', path: '/2' }];
    const second = [
      { ...base, id: 'req_3', path: '/3' },
      { ...base, id: 'req_4', path: '/4' },
    ];
    assert.equal(events.at(first, 1), expected(first[1]!));
    assert.equal(events.at(first, 1), expected(first[1]!), 'a second subscriber of the same list');
    assert.equal(events.at(first, 0), expected(first[0]!));
    assert.equal(events.at(second, 1), expected(second[1]!));
    assert.equal(events.at(second, 0), expected(second[0]!));
    assert.equal(events.at(first, 0), expected(first[0]!), 'an older list again');
  });

  it('RequestEvents lets go of a list once its publishing turn is over, and encodes it again if asked', async () => {
    const events = new RequestEvents();
    const list = [base, { ...base, id: 'req_5', path: '/5' }];
    assert.equal(events.at(list, 1), expected(list[1]!));
    await Promise.resolve();
    assert.equal((events as unknown as { batch: unknown }).batch, undefined, 'nothing held between batches');
    assert.equal(events.at(list, 1), expected(list[1]!));
    assert.equal(events.at(list, 0), expected(list[0]!));
  });

  it('each data line parses back to the listed item', () => {
    const record = { ...base, path: '/x\ny' };
    const data = requestEvent(record).split('\n')[2]!.slice('data: '.length);
    assert.deepEqual(JSON.parse(data), capturedRequestItem(record));
  });
});
