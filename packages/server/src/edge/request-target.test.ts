import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AuthorityRefusal, isOriginForm, isPrintableTarget, parseAbsoluteTarget, routingAuthority } from './request-target.js';

test('an absolute-form target gives its authority and its path as sent', () => {
  assert.deepEqual(parseAbsoluteTarget('http://b.example:8080/x/../y?q=1'), { authority: 'b.example:8080', path: '/x/../y?q=1' });
  assert.deepEqual(parseAbsoluteTarget('HTTPS://b.example'), { authority: 'b.example', path: '/' });
  assert.deepEqual(parseAbsoluteTarget('http://b.example?q'), { authority: 'b.example', path: '/?q' });
});

test('anything but origin-form or an absolute http(s) URL is no target the edge forwards', () => {
  assert.equal(isOriginForm('//other:6379/'), true, 'scheme-relative is a path on the wire');
  for (const target of [
    '*',
    'b.example:443',
    'ftp://b.example/',
    'http://user@b.example/',
    'http:///x',
    'http://b.example/#frag',
    'echo',
  ]) {
    assert.equal(isOriginForm(target) || parseAbsoluteTarget(target) !== undefined, false, target);
  }
});

test('the routing authority: absolute-form target, else :authority, else the single Host', () => {
  assert.equal(routingAuthority(['Host', 'a.example'], { authority: 'b.example', path: '/' }), 'b.example');
  assert.equal(routingAuthority([':authority', 'a.example', 'host', 'A.example'], undefined), 'a.example');
  assert.equal(routingAuthority([':authority', 'a.example'], undefined), 'a.example');
  assert.equal(routingAuthority(['HOST', 'a.example'], undefined), 'a.example');
});

test('two Host headers, a Host that disagrees with :authority, or no host at all are refused', () => {
  for (const raw of [['Host', 'a', 'Host', 'b'], ['Host', 'a', 'host', 'a'], [':authority', 'a', 'host', 'b'], [], ['Host', '']]) {
    assert.ok(routingAuthority(raw, undefined) instanceof AuthorityRefusal, JSON.stringify(raw));
  }
  assert.ok(
    routingAuthority(['Host', 'a', 'Host', 'b'], { authority: 'c', path: '/' }) instanceof AuthorityRefusal,
    'duplicates even with an absolute target',
  );
});

test('a printable target is printable ASCII only: no space, control, DEL or byte above 0x7e', () => {
  assert.ok(isPrintableTarget("/a/b?c=%C3%A9&d=~!$&'()*+,;=:@"));
  for (const target of ['/caf\u00e9', '/\u0085', '/a b', '/\t', '/\u007f', '/\u0100']) assert.ok(!isPrintableTarget(target), target);
});
