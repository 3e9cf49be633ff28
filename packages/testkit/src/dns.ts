import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { promises as dns } from 'node:dns';
import { findTool } from './tools.js';
import { freePort, pollUntil, startProcess } from './processes.js';

// Real DNS servers on loopback for tests. pebble-challtestsrv is the main one:
// records change at run time over its HTTP API. It answers with TTL 0, so no
// resolver caches between steps. What it cannot serve (a TXT value over 255
// bytes: the query times out) dnsmasq does, from records fixed at start.

/** A running pebble-challtestsrv: a DNS server (`dnsServer`) whose records the test sets. */
export interface ChallTestSrv {
  /** `127.0.0.1:<port>`, for dns.Resolver#setServers, SVC_DNS_SERVERS or Pebble's -dnsserver. */
  dnsServer: string;
  /** Adds a TXT value at `name` (several calls: several records). */
  addTxt(name: string, value: string): Promise<void>;
  /** Removes every TXT value at `name`. */
  clearTxt(name: string): Promise<void>;
  addA(name: string, addresses: readonly string[]): Promise<void>;
  setCname(name: string, target: string): Promise<void>;
  close(): Promise<void>;
}

const fqdn = (name: string): string => (name.endsWith('.') ? name : `${name}.`);

/** True once `server` answers a query at all (an empty answer counts), rather than refusing the port. */
async function answersDns(server: string): Promise<boolean> {
  const resolver = new dns.Resolver({ timeout: 200, tries: 1 });
  resolver.setServers([server]);
  try {
    await resolver.resolveTxt('ready.svc-test.invalid');
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code !== 'ECONNREFUSED' && code !== 'ETIMEOUT';
  }
}

/**
 * Starts pebble-challtestsrv with only its DNS server and management API, on
 * free loopback ports. It answers no A/AAAA query by default (the stock
 * default is 127.0.0.1 / ::1 for every name), so tests state every address.
 */
export async function startChallTestSrv(): Promise<ChallTestSrv> {
  const binary = findTool('pebble-challtestsrv');
  if (binary === undefined) throw new Error('pebble-challtestsrv not found (apt-get install -y pebble)');
  const [dnsPort, mgmtPort] = [await freePort(), await freePort()];
  const args = [
    ...['-dns01', `127.0.0.1:${dnsPort}`, '-management', `127.0.0.1:${mgmtPort}`],
    ...['-http01', '', '-https01', '', '-tlsalpn01', '', '-defaultIPv4', '', '-defaultIPv6', ''],
  ];
  const proc = await startProcess(binary, args, (out) => out.includes('Starting management server'));
  const dnsServer = `127.0.0.1:${dnsPort}`;
  const management = `http://127.0.0.1:${mgmtPort}`;
  async function post(path: string, body: object): Promise<void> {
    const res = await fetch(`${management}${path}`, { method: 'POST', body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`challtestsrv ${path}: HTTP ${res.status} ${await res.text()}`);
  }
  // Its servers start in goroutines after the log line: wait until both answer.
  await pollUntil('challtestsrv management', () =>
    post('/clear-txt', { host: 'ready.svc-test.invalid.' }).then(
      () => true,
      () => false,
    ),
  );
  await pollUntil('challtestsrv dns', () => answersDns(dnsServer));
  return {
    dnsServer,
    addTxt: (name, value) => post('/set-txt', { host: fqdn(name), value }),
    clearTxt: (name) => post('/clear-txt', { host: fqdn(name) }),
    addA: (name, addresses) => post('/add-a', { host: fqdn(name), addresses }),
    setCname: (name, target) => post('/set-cname', { host: fqdn(name), target: fqdn(target) }),
    close: () => proc.stop(),
  };
}

/** One TXT record for dnsmasq: its strings, each at most 255 bytes (dnsmasq splits longer ones itself). */
export interface DnsmasqTxt {
  name: string;
  strings: readonly string[];
}

/** A running dnsmasq serving fixed TXT records; every other name is refused. */
export interface Dnsmasq {
  dnsServer: string;
  close(): Promise<void>;
}

/** Starts dnsmasq unprivileged-friendly on a free loopback port, with no config file, upstream or hosts file. */
export async function startDnsmasq(records: readonly DnsmasqTxt[]): Promise<Dnsmasq> {
  const binary = findTool('dnsmasq');
  if (binary === undefined) throw new Error('dnsmasq not found (apt-get install -y dnsmasq)');
  const port = await freePort();
  // --no-daemon also means: no pid file, no change of user, log to stderr.
  const args = [
    '--no-daemon',
    '--conf-file=/dev/null',
    `--port=${port}`,
    '--listen-address=127.0.0.1',
    '--bind-interfaces',
    '--no-resolv',
    '--no-hosts',
    ...records.map((r) => `--txt-record=${[r.name, ...r.strings].join(',')}`),
  ];
  const proc = await startProcess(binary, args, (out) => out.includes('started'));
  const dnsServer = `127.0.0.1:${port}`;
  await pollUntil('dnsmasq dns', () => answersDns(dnsServer));
  return { dnsServer, close: () => proc.stop() };
}

/** A loopback UDP port that receives DNS queries and never answers: the timeout case. */
export async function startSilentDnsServer(): Promise<{ dnsServer: string; close(): Promise<void> }> {
  const socket = createSocket('udp4');
  socket.on('message', () => {
    // Swallowed on purpose.
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  return {
    dnsServer: `127.0.0.1:${socket.address().port}`,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
