import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EdgeRules, locationOf } from './edge-rules.js';

test('a path redirect stays on this host once expanded, whatever the visitor put in the group', () => {
  assert.equal(locationOf('//evil.example/x', '/$1'), '/evil.example/x');
  assert.equal(locationOf('/\\\\evil.example', '/$1'), '/evil.example');
  assert.equal(locationOf('/docs/intro', '/docs/$1'), '/docs/intro');
  // A URL template or a protocol-relative one is the rule author's choice.
  assert.equal(locationOf('https://docs.example.com//a', 'https://docs.example.com/$1'), 'https://docs.example.com//a');
  assert.equal(locationOf('//cdn.example/a', '//cdn.example/$1'), '//cdn.example/a');
});

test('characters a header cannot carry are percent-encoded as UTF-8', () => {
  assert.equal(locationOf('/日本', '/日本'), '/%E6%97%A5%E6%9C%AC');
  assert.equal(locationOf('/a b\r\nX: y', '/$1'), '/a%20b%0D%0AX:%20y');
  assert.equal(locationOf('/café?q=ü', '/café?q=ü'), '/caf%C3%A9?q=%C3%BC');
});

test('an edge rule redirecting to a non-ASCII path answers a Location Node can write', () => {
  const rules = new EdgeRules([{ match: { path: '/uni' }, redirect: { to: '/日本' } }]);
  const outcome = rules.evaluate({ method: 'GET', target: '/uni', headers: [] });
  assert.equal(outcome !== undefined && 'reply' in outcome ? outcome.reply.headers.location : undefined, '/%E6%97%A5%E6%9C%AC');
});
