import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { proxyFixture, rawOrigin, visit, type ProxyFixture, type TestOrigin } from './origin-test-support.js';

// An origin that repeats its response head byte for byte has it read once per connection and
// shared (h1-head-memo.ts): what one exchange does to its head must not reach the next one.
describe('OriginProxy with a response head the origin repeats', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  async function setup(answer: (port: number) => string, hostHeader?: string): Promise<{ origin: TestOrigin; fixture: ProxyFixture }> {
    let port = 0;
    const origin = await rawOrigin((socket) => socket.write(answer(port)));
    port = origin.port;
    cleanups.push(() => origin.close());
    const fixture = await proxyFixture(origin.url, hostHeader === undefined ? {} : { hostHeader });
    cleanups.push(() => fixture.close());
    return { origin, fixture };
  }

  it('rewrites the Location of each visitor from the same repeated head', async () => {
    const { origin, fixture } = await setup(
      (port) => `HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:${port}/next\r\nContent-Length: 0\r\n\r\n`,
      'rewrite',
    );
    const visitor = (host: string): string[] => ['X-Forwarded-Proto', 'https', 'X-Forwarded-Host', host];
    const first = await visit(fixture, { headers: visitor('a.example') });
    const second = await visit(fixture, { headers: visitor('b.example') });
    const third = await visit(fixture, { headers: visitor('c.example') });
    assert.equal(origin.connections.length, 1, 'the three requests shared one keep-alive connection');
    assert.deepEqual(first.headers, ['Location', 'https://a.example/next', 'Content-Length', '0']);
    assert.deepEqual(second.headers, ['Location', 'https://b.example/next', 'Content-Length', '0']);
    assert.deepEqual(third.headers, ['Location', 'https://c.example/next', 'Content-Length', '0']);
  });

  it('sends each response its own body under the one head', async () => {
    let count = 0;
    const { fixture } = await setup(
      () => `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\n${String(++count).padStart(3, '0')}`,
    );
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await visit(fixture));
    assert.deepEqual(
      answers.map((answer) => [answer.status, answer.headers, answer.body.toString()]),
      ['001', '002', '003'].map((body) => [200, ['Content-Type', 'text/plain', 'Content-Length', '3'], body]),
    );
  });
});
