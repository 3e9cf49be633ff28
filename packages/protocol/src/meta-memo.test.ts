import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProtocolError } from './frame.js';
import { MetaMemo, copyJson } from './meta-memo.js';

const bytes = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

describe('MetaMemo', () => {
  const head = { m: 'GET', p: '/a', h: ['Host', 'x.example', 'Accept', '*/*'], t: 'tun_1', i: 1 };

  it('gives each caller its own copy of a repeated payload, down to the arrays', () => {
    const memo = new MetaMemo();
    const first = memo.decode(bytes(head)) as typeof head;
    first.h[1] = 'edited.example';
    first.h.push('Extra', '1');
    first.p = '/edited';
    const second = memo.decode(bytes(head)) as typeof head;
    assert.deepEqual(second, head);
    assert.notEqual(second.h, first.h);
    const third = memo.decode(bytes(head));
    assert.deepEqual(third, head);
    assert.notEqual(third, second);
  });

  it('decodes a payload that differs from the last one, and remembers that one instead', () => {
    const memo = new MetaMemo();
    const other = { ...head, p: '/b' };
    assert.deepEqual(memo.decode(bytes(head)), head);
    assert.deepEqual(memo.decode(bytes(other)), other);
    assert.deepEqual(memo.decode(bytes(other)), other);
    assert.deepEqual(memo.decode(bytes(head)), head);
  });

  it('compares the bytes, not only their length', () => {
    const memo = new MetaMemo();
    assert.deepEqual(memo.decode(Buffer.from('{"s":200}')), { s: 200 });
    assert.deepEqual(memo.decode(Buffer.from('{"s":404}')), { s: 404 });
  });

  it('reads the payload, not a view into a buffer the session reuses', () => {
    const memo = new MetaMemo();
    const wire = Buffer.from(JSON.stringify(head));
    memo.decode(wire);
    wire.fill(0x20);
    wire.write('{"s":1}');
    assert.deepEqual(memo.decode(Buffer.from(JSON.stringify(head))), head);
  });

  it('still refuses malformed JSON, repeated or not', () => {
    const memo = new MetaMemo();
    assert.throws(() => memo.decode(Buffer.from('{"m":')), ProtocolError);
    assert.throws(() => memo.decode(Buffer.from('{"m":')), ProtocolError);
  });

  it('decodes long payloads every time', () => {
    const memo = new MetaMemo();
    const long = { ...head, h: ['X-Long', 'a'.repeat(4000)] };
    assert.deepEqual(memo.decode(bytes(long)), long);
    assert.deepEqual(memo.decode(bytes(long)), long);
  });

  it('copies nested objects and arrays, and keeps primitives and null', () => {
    const value = { a: [1, { b: ['c'] }], n: null, t: true, s: 'x', ['__proto__']: { p: 1 } };
    const source = JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
    const copy = copyJson(source) as Record<string, unknown>;
    assert.deepEqual(copy, source);
    assert.notEqual(copy.a, source.a);
    assert.notEqual((copy.a as unknown[])[1], (source.a as unknown[])[1]);
    assert.equal(Object.getPrototypeOf(copy), Object.prototype);
    assert.ok(Object.hasOwn(copy, '__proto__'));
  });
});
