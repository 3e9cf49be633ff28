import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RequestHead } from '@svcrouter/protocol';
import { Inspector } from './inspector.js';
import { parseLocalTarget, type LocalTarget } from './local-target.js';

const target = parseLocalTarget('3000') as LocalTarget;

function capture(tap: ReturnType<Inspector['tap']>, path: string): void {
  const exchange = tap({ m: 'GET', p: path, h: ['Host', 'a.example'], t: 't' });
  exchange.response(200, ['Content-Length', '2']);
  exchange.responseBody(Buffer.from('ok'));
  exchange.done({ method: 'GET', path, status: 200, durationMs: 1 });
}

test('the inspector keeps the last maxRequests captures, newest first, and forgets older ones', () => {
  const inspector = new Inspector({ maxRequests: 3 });
  const tap = inspector.tap({ url: 'https://a.example', target });
  for (let i = 1; i <= 5; i++) capture(tap, `/${i}`);
  assert.deepEqual(
    inspector.list().map((record) => [record.id, record.path]),
    [
      ['req_5', '/5'],
      ['req_4', '/4'],
      ['req_3', '/3'],
    ],
  );
  assert.equal(inspector.get('req_4')?.path, '/4');
  assert.equal(inspector.get('req_4')?.tunnel, 'https://a.example');
  assert.equal(inspector.get('req_2'), undefined, 'replaced by req_5');
  assert.equal(inspector.get('req_6'), undefined, 'not yet captured');
  assert.equal(inspector.get('req_x'), undefined);
});

test('with a host rewrite, the capture shows the Host the visitor sent', () => {
  const inspector = new Inspector();
  const tap = inspector.tap({ url: 'https://a.example', target, hostHeader: 'rewrite' });
  const head: RequestHead = { m: 'GET', p: '/', h: ['Host', 'a.example'], t: 't' };
  const exchange = tap(head);
  head.h[1] = 'localhost:3000';
  exchange.done({ method: 'GET', path: '/', status: 404, durationMs: 1 });
  assert.deepEqual(inspector.get('req_1')?.request.headers, [['Host', 'a.example']]);
  assert.equal(inspector.get('req_1')?.response, undefined);
});
