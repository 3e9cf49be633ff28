import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { eventually } from './harness/api-helpers.js';
import {
  AGENT_BIN,
  api,
  loopbackLookup,
  runAgent,
  spawnAgent,
  spawnNode,
  startServer,
  tempDir,
  visit,
  type TestServer,
} from './harness/index.js';
import { closedPort } from './harness/pool-support.js';
import { startRawAgent } from './harness/raw-agent.js';
import type { Proc } from './harness/processes.js';

/** A local service that answers `<name> <path> host=<Host>` and echoes WebSocket-style upgrades. */
interface Service {
  port: number;
  close(): Promise<void>;
}

async function startService(name: string): Promise<Service> {
  const server = http.createServer((request, response) => {
    response.end(`${name} ${request.url} host=${request.headers.host}`);
  });
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('upgrade', (request: http.IncomingMessage, socket: Socket) => {
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: ${request.headers.upgrade}\r\nConnection: Upgrade\r\nX-Served-By: ${name}\r\n\r\n`,
    );
    // Echoes each chunk prefixed with the service's name, so the test sees who answered.
    socket.on('data', (chunk: Buffer) => socket.write(`${name}:${chunk.toString()}`));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** An HTTP/2 cleartext (prior knowledge) service answering with the protocol it was spoken to in. */
async function startH2Service(): Promise<Service> {
  const server = http2.createServer((request, response) => response.end(`h2 ${request.url} HTTP/${request.httpVersion}`));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Opens an upgrade to `path` on `hostname` through the edge, sends `message`, resolves with the 101's headers and the echo. */
function upgradeThrough(server: TestServer, hostname: string, requestPath: string, message: string) {
  return new Promise<{ servedBy: string | undefined; echo: string }>((resolve, reject) => {
    const request = http.request(`http://${hostname}:${server.httpPort}${requestPath}`, {
      headers: { connection: 'Upgrade', upgrade: 'websocket' },
      lookup: loopbackLookup,
      agent: false,
    });
    request.on('upgrade', (response, socket: Socket) => {
      socket.write(message);
      socket.once('data', (chunk: Buffer) => {
        socket.destroy();
        resolve({ servedBy: response.headers['x-served-by'] as string | undefined, echo: chunk.toString() });
      });
    });
    request.on('response', (response) => reject(new Error(`no upgrade: ${response.statusCode}`)));
    request.on('error', reject);
    request.end();
  });
}

/** Starts an agent (`svc http …` or `svc start …`) and resolves with its hostname, Forwarding lines and inspector. */
async function started(proc: Proc, routes: number): Promise<{ proc: Proc; hostname: string; forwarding: string[]; inspector: string }> {
  const main = await proc.waitForLine(/^Forwarding https:\/\/([^:/\s]+)(?::\d+)? -> /);
  const inspector = (await proc.waitForLine(/^Inspector (http:\/\/127\.0\.0\.1:\d+)$/))[1]!;
  const forwarding = proc.lines.filter((line) => line.startsWith('Forwarding '));
  assert.equal(forwarding.length, routes + 1, `one Forwarding line per route and the main one: ${forwarding.join(' | ')}`);
  return { proc, hostname: main[1]!, forwarding, inspector };
}

async function localInspector(base: string): Promise<Array<{ path: string; target?: string }>> {
  const response = await fetch(`${base}/api/requests`);
  return ((await response.json()) as { requests: Array<{ path: string; target?: string }> }).requests;
}

// One hostname, several local services by path (`--route`, `routes:` in svc.yml).
describe('routes', () => {
  let server: TestServer;
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let web: Service;
  let apiService: Service;
  let apiV2: Service;
  let ws: Service;
  let h2: Service;
  let down: number;

  before(async () => {
    server = await startServer();
    temp = await tempDir('svc-routes-');
    [web, apiService, apiV2, ws, h2] = await Promise.all([
      startService('web'),
      startService('api'),
      startService('api-v2'),
      startService('ws'),
      startH2Service(),
    ]);
    down = await closedPort();
  });
  after(async () => {
    await Promise.all([web, apiService, apiV2, ws, h2].map((service) => service?.close()));
    await server?.close();
    await temp?.remove();
  });

  /** The routes of every test here, as flags. */
  const flags = (): string[] => [
    '--route',
    `/api=${apiService.port}`,
    '--route',
    `/api/v2/=localhost:${apiV2.port},host-header=rewrite`,
    '--route',
    `/ws=127.0.0.1:${ws.port}`,
    '--route',
    `/grpc=${h2.port},proto=h2`,
    '--route',
    `/down=127.0.0.1:${down}`,
  ];

  /** What every form of the configuration must do: the same answers to the same requests. */
  async function assertRouting(hostname: string): Promise<void> {
    const text = async (requestPath: string) => (await visit(server, hostname, requestPath)).text;
    assert.equal(await text('/'), `web / host=${hostname}:${server.httpPort}`);
    assert.equal(await text('/apix'), `web /apix host=${hostname}:${server.httpPort}`, '/apix is not under /api');
    assert.equal(await text('/api'), `api /api host=${hostname}:${server.httpPort}`);
    assert.equal(await text('/api/users?x=1'), `api /api/users?x=1 host=${hostname}:${server.httpPort}`);
    // The longest prefix wins, and this route rewrites Host to its own target's.
    assert.equal(await text('/api/v2/users'), `api-v2 /api/v2/users host=localhost:${apiV2.port}`);
    assert.equal(await text('/grpc/ping'), 'h2 /grpc/ping HTTP/2.0');
  }

  it('sends each path to the longest matching route, the rest to the main target, with per-route host header and h2', async () => {
    const agent = await started(
      spawnAgent(server, { token: server.token, target: web.port, args: [...flags(), '--inspect-addr', '127.0.0.1:0'] }),
      5,
    );
    try {
      await assertRouting(agent.hostname);
      const base = agent.forwarding[0]!.slice('Forwarding '.length).split(' -> ')[0]!;
      assert.deepEqual(agent.forwarding.slice(1), [
        `Forwarding ${base}/api -> http://localhost:${apiService.port}`,
        `Forwarding ${base}/api/v2 -> http://localhost:${apiV2.port}`,
        `Forwarding ${base}/ws -> http://127.0.0.1:${ws.port}`,
        `Forwarding ${base}/grpc -> http://localhost:${h2.port}`,
        `Forwarding ${base}/down -> http://127.0.0.1:${down}`,
      ]);
    } finally {
      await agent.proc.kill('SIGINT');
    }
  });

  it('a WebSocket upgrade follows its route', async () => {
    const agent = await started(
      spawnAgent(server, { token: server.token, target: web.port, args: [...flags(), '--inspect-addr', '127.0.0.1:0'] }),
      5,
    );
    try {
      assert.deepEqual(await upgradeThrough(server, agent.hostname, '/ws/socket', 'hello'), { servedBy: 'ws', echo: 'ws:hello' });
      assert.deepEqual(await upgradeThrough(server, agent.hostname, '/hmr', 'hi'), { servedBy: 'web', echo: 'web:hi' });
    } finally {
      await agent.proc.kill('SIGINT');
    }
  });

  it("a route whose local service refuses gets the 502 page naming that route's target", async () => {
    const agent = await started(
      spawnAgent(server, { token: server.token, target: web.port, args: [...flags(), '--inspect-addr', '127.0.0.1:0'] }),
      5,
    );
    try {
      const answer = await visit(server, agent.hostname, '/down/x');
      assert.equal(answer.status, 502);
      assert.match(answer.text, new RegExp(`could not reach 127\\.0\\.0\\.1:${down}\\.`));
      assert.doesNotMatch(answer.text, new RegExp(`:${web.port}`));
    } finally {
      await agent.proc.kill('SIGINT');
    }
  });

  it('the local inspector and the Traffic Inspector both name the target that served each request', async () => {
    const agent = await started(
      spawnAgent(server, { token: server.token, target: web.port, args: [...flags(), '--inspect-addr', '127.0.0.1:0'] }),
      5,
    );
    try {
      const paths = ['/mark-main', '/api/mark', '/api/v2/mark', '/down/mark'];
      for (const requestPath of paths) await visit(server, agent.hostname, requestPath);
      const expected: Record<string, string> = {
        '/mark-main': `localhost:${web.port}`,
        '/api/mark': `localhost:${apiService.port}`,
        '/api/v2/mark': `localhost:${apiV2.port}`,
        '/down/mark': `127.0.0.1:${down}`,
      };
      const local = await eventually(
        () => localInspector(agent.inspector),
        (records) => paths.every((p) => records.some((record) => record.path === p)),
        'the local inspector has every request',
      );
      for (const requestPath of paths) assert.equal(local.find((r) => r.path === requestPath)!.target, expected[requestPath], requestPath);

      const edge = await eventually(
        async () =>
          (await api(server, 'GET', `/v1/requests?host=${agent.hostname}&limit=100`, { token: server.token })).body as {
            requests: Array<{ path: string; target: string | null; status: number }>;
          },
        (page) => paths.every((p) => page.requests.some((record) => record.path === p)),
        'the Traffic Inspector has every request',
      );
      for (const requestPath of paths) {
        assert.equal(edge.requests.find((r) => r.path === requestPath)!.target, expected[requestPath], requestPath);
      }
      assert.equal(edge.requests.find((r) => r.path === '/down/mark')!.status, 502);
    } finally {
      await agent.proc.kill('SIGINT');
    }
  });

  it('a tunnel without routes records no target at the edge', async () => {
    const agent = await started(spawnAgent(server, { token: server.token, target: web.port, args: ['--inspect-addr', '127.0.0.1:0'] }), 0);
    try {
      await visit(server, agent.hostname, '/plain');
      const edge = await eventually(
        async () =>
          (await api(server, 'GET', `/v1/requests?host=${agent.hostname}`, { token: server.token })).body as {
            requests: Array<{ path: string; target: string | null }>;
          },
        (page) => page.requests.length > 0,
        'the record is stored',
      );
      assert.equal(edge.requests[0]!.target, null);
    } finally {
      await agent.proc.kill('SIGINT');
    }
  });

  it('the agent API starts a tunnel with routes and lists them', async () => {
    const agent = await started(spawnAgent(server, { token: server.token, target: web.port, args: ['--inspect-addr', '127.0.0.1:0'] }), 0);
    try {
      const created = await fetch(`${agent.inspector}/api/tunnels`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'routed',
          addr: web.port,
          routes: [`/api=${apiService.port}`, { path: '/ws', addr: `127.0.0.1:${ws.port}` }],
        }),
      });
      assert.equal(created.status, 201);
      const tunnel = (await created.json()) as { url: string; routes: Array<{ path: string; local: string }> };
      assert.deepEqual(tunnel.routes, [
        { path: '/api', local: `http://localhost:${apiService.port}` },
        { path: '/ws', local: `http://127.0.0.1:${ws.port}` },
      ]);
      const hostname = new URL(tunnel.url).hostname;
      assert.match((await visit(server, hostname, '/api/x')).text, /^api \/api\/x /);
      assert.match((await visit(server, hostname, '/x')).text, /^web \/x /);
      const refused = await fetch(`${agent.inspector}/api/tunnels`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'bad', addr: web.port, routes: ['/api=1', '/api/=2'] }),
      });
      assert.equal(refused.status, 400);
      assert.deepEqual(await refused.json(), { error: 'invalid_request', message: 'routes.1: route path "/api" is given twice' });
    } finally {
      await agent.proc.kill('SIGINT');
    }
  });

  it("the edge refuses an agent's bad routes at bind, with the reason", async () => {
    const raw = await startRawAgent(server.url, server.token!);
    try {
      const answer = await raw.bind({
        local: `localhost:${web.port}`,
        routes: [
          { path: '/api', local: 'localhost:4000' },
          { path: '/api/', local: 'localhost:4001' },
        ],
      });
      assert.deepEqual(answer.type === 'bindError' && [answer.code, answer.message], [
        'NAME_INVALID',
        'invalid routes: route path "/api" is given twice',
      ]);
      const shaped = await raw.bind({ local: `localhost:${web.port}`, routes: [{ path: '/../etc', local: 'localhost:4000' }] });
      assert.equal(shaped.type, 'bindError');
    } finally {
      raw.close();
    }
  });

  it('routes: in svc.yml, in both forms, routes as the flags do', async () => {
    const file = path.join(temp.dir, 'svc.yml');
    await writeFile(
      file,
      [
        'version: 1',
        'tunnels:',
        '  web:',
        `    addr: ${web.port}`,
        '    routes:',
        `      - /api=${apiService.port}`,
        `      - path: /api/v2/`,
        `        addr: localhost:${apiV2.port}`,
        '        hostHeader: rewrite',
        `      - /ws=127.0.0.1:${ws.port}`,
        `      - path: /grpc`,
        `        addr: ${h2.port}`,
        '        proto: h2',
        `      - /down=127.0.0.1:${down}`,
        '',
      ].join('\n'),
    );
    const proc = spawnAgentStart(server, file);
    const agent = await started(proc, 5);
    try {
      await assertRouting(agent.hostname);
      assert.deepEqual(await upgradeThrough(server, agent.hostname, '/ws', 'yml'), { servedBy: 'ws', echo: 'ws:yml' });
    } finally {
      await proc.kill('SIGINT');
    }
  });

  it('svc config check reports bad routes at file:line:column', async () => {
    const file = path.join(temp.dir, 'bad.yml');
    await writeFile(
      file,
      [
        'version: 1',
        'tunnels:',
        '  web:',
        '    addr: 5173',
        '    routes:',
        '      - /api=4000',
        '      - path: /api/',
        '        addr: 4001',
        '      - nope=4000',
        '      - /x=4000,proto=h3',
        '      - path: /y',
        '        adr: 1',
        '',
      ].join('\n'),
    );
    const result = await runAgent(['config', 'check', '--config', file], {});
    assert.equal(result.code, 1);
    assert.deepEqual(result.stderr.split('\n'), [
      `${file}:7:9 tunnels.web.routes.1: route path "/api" is given twice`,
      `${file}:9:9 tunnels.web.routes.2: invalid route path "nope": must start with /`,
      `${file}:10:9 tunnels.web.routes.3: route /x: proto takes "http1" or "h2", not "h3"`,
      `${file}:12:14 tunnels.web.routes.4.adr: unknown key (expected one of: path, addr, hostHeader, proto)`,
    ]);
    const flag = await runAgent(['http', '5173', '--route', '/api=4000', '--route', '/api/=4001'], { SVC_TOKEN: server.token });
    assert.equal(flag.code, 2);
    assert.match(flag.stderr, /^--route: route path "\/api" is given twice/);
  });
});

/** `svc start --config <file>` with its inspector on a free port. */
function spawnAgentStart(server: TestServer, file: string): Proc {
  return spawnNode(
    AGENT_BIN,
    ['start', '--config', file, '--inspect-addr', '127.0.0.1:0'],
    { SVC_SERVER: server.url, SVC_TOKEN: server.token },
    'agent',
  );
}
