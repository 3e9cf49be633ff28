import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { parseWrk, pickLoadGenerator, runLoad, wrkInstalled, type LoadGenerator } from './loadgen.js';

// Each generator against a real server on loopback: the figures every small-GET row is made of.
describe('load generators', () => {
  let server: http.Server;
  let port: number;
  const seen = { hosts: new Set<string>(), authorizations: new Set<string>() };

  before(async () => {
    server = http.createServer((req, res) => {
      seen.hosts.add(String(req.headers.host));
      seen.authorizations.add(String(req.headers.authorization));
      res.writeHead(req.url === '/fail' ? 500 : 200, { 'content-type': 'text/plain' }).end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const generators: LoadGenerator[] = ['node', 'wrk'];
  for (const generator of generators) {
    const skip = generator === 'wrk' && !wrkInstalled() && process.env.CI !== 'true' ? 'wrk is not installed' : false;

    it(`${generator}: counts answered requests, their rate and latency, with the Host and headers asked for`, { skip }, async () => {
      const result = await runLoad(generator, {
        port,
        path: '/ok',
        host: `${generator}.tunnels.test`,
        connections: 4,
        durationS: 1,
        headers: { authorization: `Basic ${generator}` },
      });
      assert.ok(result.requests > 0, JSON.stringify(result));
      assert.equal(result.errors, 0);
      assert.ok(result.durationS > 0.5 && result.durationS < 5, `duration ${result.durationS}`);
      assert.ok(result.rps > 0 && Number.isFinite(result.rps));
      assert.ok(result.p50Ms > 0 && result.p50Ms <= result.p99Ms, `p50 ${result.p50Ms}, p99 ${result.p99Ms}`);
      assert.ok(seen.hosts.has(`${generator}.tunnels.test`));
      assert.ok(seen.authorizations.has(`Basic ${generator}`));
    });

    it(`${generator}: counts answers of 400 and above as errors`, { skip }, async () => {
      const result = await runLoad(generator, { port, path: '/fail', host: 'fail.tunnels.test', connections: 2, durationS: 1 });
      assert.ok(result.requests > 0);
      assert.ok(result.errors > 0, JSON.stringify(result));
    });
  }

  it(
    'picks the Node generator when asked, and wrk by default when it is installed',
    { skip: !wrkInstalled() && 'wrk is not installed' },
    () => {
      assert.equal(pickLoadGenerator('node'), 'node');
      assert.equal(pickLoadGenerator(), 'wrk');
      assert.equal(pickLoadGenerator('wrk'), 'wrk');
    },
  );

  it("parses wrk's report, its units and its error lines", () => {
    const report = [
      'Running 1s test @ http://127.0.0.1:1/',
      '  Latency Distribution',
      '     50%  812.00us',
      '     75%    1.20ms',
      '     99%    2.50ms',
      '  9000 requests in 1.00s, 1.10MB read',
      '  Socket errors: connect 0, read 2, write 1, timeout 3',
      '  Non-2xx or 3xx responses: 4',
      'Requests/sec:   8999.50',
    ].join('\n');
    assert.deepEqual(parseWrk(report), { requests: 9000, durationS: 1, rps: 8999.5, p50Ms: 0.812, p99Ms: 2.5, errors: 10 });
    assert.throws(() => parseWrk('nothing'), /unexpected wrk output/);
  });
});
