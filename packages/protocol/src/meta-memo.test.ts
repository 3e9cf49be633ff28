import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProtocolError } from './frame.js';
import { JsonTextMemo, MetaMemo, copyJson } from './meta-memo.js';

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

describe('JsonTextMemo', () => {
  const head = (): Record<string, unknown> => ({ m: 'GET', p: '/a', h: ['Host', 'x.example', 'Accept', '*/*'], t: 'tun_1', i: 1 });

  it('writes what JSON.stringify writes, for repeated and changing heads alike', () => {
    const memo = new JsonTextMemo();
    const values: unknown[] = [
      head(),
      head(),
      { ...head(), p: '/b' },
      { ...head(), h: ['Host', 'x.example', 'Accept', 'text/html'] },
      { ...head(), h: ['Host', 'x.example'] },
      { ...head(), b: 1 },
      { ...head(), i: undefined },
      { t: 'tun_1', m: 'GET', p: '/a', h: ['Host', 'x.example', 'Accept', '*/*'], i: 1 },
      head(),
      { ...head(), h: 'not an array' },
      { ...head(), n: null, f: false, z: -0 },
      { ...head(), n: null, f: false, z: 0 },
      ['an', 'array'],
      'a string',
      null,
      undefined,
      head(),
    ];
    for (const value of values) assert.equal(memo.encode(value), JSON.stringify(value ?? null));
  });

  it('is not fooled by a head edited after it was encoded', () => {
    const memo = new JsonTextMemo();
    const first = head();
    memo.encode(first);
    (first.h as string[])[1] = 'edited.example';
    first.p = '/edited';
    assert.equal(memo.encode(first), JSON.stringify(first));
    assert.equal(memo.encode(head()), JSON.stringify(head()));
  });

  it('encodes values it does not remember every time: nested objects, class instances, NaN, inherited keys', () => {
    const memo = new JsonTextMemo();
    const nested = { ...head(), x: { y: 1 } };
    assert.equal(memo.encode(nested), JSON.stringify(nested));
    nested.x.y = 2;
    assert.equal(memo.encode(nested), JSON.stringify(nested));
    class Head {
      m = 'GET';
      toJSON(): unknown {
        return { m: this.m, at: 'class' };
      }
    }
    assert.equal(memo.encode(new Head()), JSON.stringify(new Head()));
    assert.equal(memo.encode({ m: 'GET' }), '{"m":"GET"}');
    assert.equal(memo.encode(new Head()), '{"m":"GET","at":"class"}');
    const withToJson = { m: 'GET', toJSON: () => 'replaced' };
    assert.equal(memo.encode(withToJson), '"replaced"');
    assert.equal(memo.encode(withToJson), '"replaced"');
    assert.equal(memo.encode({ n: NaN }), '{"n":null}');
    assert.equal(memo.encode({ n: NaN }), '{"n":null}');
    const child = Object.create({ inherited: 1 }) as Record<string, unknown>;
    child.m = 'GET';
    assert.equal(memo.encode({ m: 'GET' }), '{"m":"GET"}');
    assert.equal(memo.encode(child), JSON.stringify(child));
  });

  it('still refuses what jsonText refuses, and remembers no long payload', () => {
    const memo = new JsonTextMemo();
    assert.throws(() => memo.encode({ b: 1n }), TypeError);
    const long = { ...head(), h: ['X-Long', 'a'.repeat(4000)] };
    assert.equal(memo.encode(long), JSON.stringify(long));
    assert.equal(memo.encode(long), JSON.stringify(long));
  });
});
