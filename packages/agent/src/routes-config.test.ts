import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { parseCommand } from './args.js';
import { parseConfig } from './config-file.js';
import { routeOptionsOf } from './config-routes.js';
import { forwardingLine } from './output.js';
import { jsonOutput } from './output-json.js';
import { ScreenModel } from './screen-model.js';
import { renderScreen } from './screen-render.js';

test('--route is repeatable and gives the same routes as both forms of routes: in svc.yml', () => {
  const command = parseCommand(['http', '5173', '--route', '/api=4000,host-header=rewrite', '--route', '/ws=localhost:9000,proto=h2']);
  assert.ok(typeof command !== 'string' && command.kind === 'http');
  const config = parseConfig(
    [
      'tunnels:',
      '  web:',
      '    addr: 5173',
      '    routes:',
      '      - /api=4000,host-header=rewrite',
      '      - path: /ws',
      '        addr: localhost:9000',
      '        proto: h2',
    ].join('\n'),
  );
  assert.ok(config.ok);
  assert.deepEqual(routeOptionsOf(config.config.tunnels.web!.routes), command.tunnel.routes);
  assert.deepEqual(command.tunnel.routes, [
    { path: '/api', addr: '4000', hostHeader: 'rewrite' },
    { path: '/ws', addr: 'localhost:9000', proto: 'h2' },
  ]);
});

test('a bad --route is a usage error naming the flag', () => {
  assert.equal(
    parseCommand(['http', '5173', '--route', '/api']),
    '--route: invalid route "/api": expected <path>=<target>, such as /api=4000',
  );
  assert.equal(
    parseCommand(['http', '5173', '--route', '/api=4000', '--route', '/api/=4001']),
    '--route: route path "/api" is given twice',
  );
});

test('routes: on a TCP tunnel, or more than the limit, is refused at its key', () => {
  const tcp = parseConfig(['tunnels:', '  db:', '    addr: 5432', '    proto: tcp', '    routes: [/api=4000]'].join('\n'));
  assert.ok(!tcp.ok);
  assert.deepEqual(
    tcp.problems.map((p) => `${p.line}:${p.column} ${p.key}: ${p.message}`),
    ['5:13 tunnels.db.routes: applies to HTTP tunnels only, not proto: tcp'],
  );
  const many = Array.from({ length: 33 }, (_, i) => `/r${i}=4000`).join(', ');
  const tooMany = parseConfig(['tunnels:', '  web:', '    addr: 5173', `    routes: [${many}]`].join('\n'));
  assert.ok(!tooMany.ok);
  assert.equal(tooMany.problems[0]!.message, 'at most 32 routes per tunnel');
});

test('the Forwarding lines: the main target, then one per route under the public URL', () => {
  const line = forwardingLine({
    name: '',
    url: 'https://x.localhost:8443',
    local: 'http://localhost:5173',
    routes: [{ path: '/api', local: 'http://localhost:4000' }],
  });
  assert.equal(
    line,
    'Forwarding https://x.localhost:8443 -> http://localhost:5173\nForwarding https://x.localhost:8443/api -> http://localhost:4000',
  );
});

test('the live screen shows a Forwarding row per route, and JSON output carries the routes in its started event', () => {
  const view = {
    name: '',
    url: 'https://x.localhost:8443',
    local: 'http://localhost:5173',
    routes: [{ path: '/api', local: 'http://localhost:4000' }],
  };
  const screen = new ScreenModel();
  screen.state = 'online';
  screen.tunnels = [view];
  const text = renderScreen(screen, { columns: 120, rows: 30 }, false);
  assert.match(text, /\nForwarding\s+https:\/\/x\.localhost:8443 -> http:\/\/localhost:5173\n/);
  assert.match(text, /\nForwarding\s+https:\/\/x\.localhost:8443\/api -> http:\/\/localhost:4000\n/);
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const output = jsonOutput(stdout, stderr);
  output.started([view]);
  output.flush();
  const event = JSON.parse(String(stdout.read())) as { event: string; routes: unknown };
  assert.equal(event.event, 'started');
  assert.deepEqual(event.routes, view.routes);
  assert.equal(String(stderr.read()), `${forwardingLine(view)}\n`);
});
