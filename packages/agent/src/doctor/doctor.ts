import { ErrorCode, Messages, SvcError } from '@svcrouter/protocol';
import { forward, type Tunnel } from '@svcrouter/sdk';
import { TOKEN_SHAPE } from '../config-schema.js';
import { explainFailure } from '../failure.js';
import { HINTS, type CheckName } from './hints.js';
import { startDoctorService, type DoctorService } from './local-service.js';
import { download, firstEvent, get1, get2, upload, verifyTls, webSocketEcho, within, type PublicTarget } from './probes.js';
import { describe, getJson, isUntrusted, type ServerAnswer } from './server-probes.js';

/** The transfer size of the upload and download checks by default, bytes (`--transfer-size`). */
export const DEFAULT_TRANSFER_BYTES = 100 * 1024 * 1024;
/** Largest clock difference with the server that passes, ms. */
export const MAX_CLOCK_SKEW_MS = 30_000;
/** How long one small check may take, ms. */
const CHECK_TIMEOUT_MS = 15_000;
/** A transfer may take this long, plus TRANSFER_MS_PER_MIB for each MiB. */
const TRANSFER_TIMEOUT_MS = 30_000;
const TRANSFER_MS_PER_MIB = 1_000;

/** One check's outcome: `summary` is its figure (or why it failed or was skipped). */
export interface CheckResult {
  name: CheckName;
  status: 'pass' | 'fail' | 'skip';
  summary: string;
  /** What to do about a failure. */
  hint?: string;
  durationMs: number;
  /** The measured values, for --json. */
  data?: Record<string, unknown>;
}

/** What `svc doctor` checks against. */
export interface DoctorOptions {
  /** The first SVC_SERVER URL. */
  server: string;
  token: string | undefined;
  /** SVC_CA_FILE's PEM. */
  ca: string | undefined;
  transferBytes: number;
}

/** A failed check: the sentence and the hint. */
class CheckFailure extends Error {
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

type Outcome = { summary: string; data?: Record<string, unknown> };

/**
 * Runs every check in CHECK_NAMES order and reports each as it completes. A check whose
 * prerequisite failed is skipped, saying which; the temporary tunnel and the built-in service
 * are closed whatever happens.
 */
export async function runDoctor(options: DoctorOptions, report: (result: CheckResult) => void): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  let blocked: string | undefined;
  const run = async (name: CheckName, work: (signal: AbortSignal) => Promise<Outcome>, timeoutMs = CHECK_TIMEOUT_MS): Promise<boolean> => {
    const started = performance.now();
    let result: CheckResult;
    if (blocked !== undefined) {
      result = { name, status: 'skip', summary: `skipped: ${blocked}`, durationMs: 0 };
    } else {
      try {
        const outcome = await within(timeoutMs, name, work);
        result = { name, status: 'pass', durationMs: 0, ...outcome };
      } catch (error) {
        const hint = error instanceof CheckFailure ? error.hint : HINTS[name];
        result = { name, status: 'fail', summary: describe(error), hint, durationMs: 0 };
      }
    }
    result.durationMs = Math.round(performance.now() - started);
    results.push(result);
    report(result);
    return result.status === 'pass';
  };

  let answer: ServerAnswer | undefined;
  const serverUp = await run('server', async (signal) => {
    answer = await getJson(options.server, '/v1/openapi.json', undefined, options.ca, signal).catch((error: unknown) => {
      throw new CheckFailure(`cannot reach ${options.server}: ${describe(error)}`, isUntrusted(error) ? HINTS.tls : HINTS.server);
    });
    const version = (answer.json as { info?: { version?: unknown } } | undefined)?.info?.version;
    if (answer.status !== 200 || typeof version !== 'string') {
      throw new CheckFailure(`${options.server} answered ${answer.status}, not as svc-server does`, HINTS.server);
    }
    const ms = answer.answeredMs - answer.sentMs;
    return { summary: `${options.server} answers: svc-server ${version} (${ms} ms)`, data: { url: options.server, version, ms } };
  });
  if (!serverUp) blocked = 'the server is not reachable';

  const tokenOk = await run('token', (signal) => checkToken(options, signal));
  await run('clock', async () => clockCheck(answer!));
  if (!tokenOk) blocked ??= 'the token is not valid';

  let service: DoctorService | undefined;
  let tunnel: Tunnel | undefined;
  try {
    await run('tunnel', async () => {
      service = await startDoctorService();
      const started = performance.now();
      tunnel = await forward({
        addr: `127.0.0.1:${service.port}`,
        token: options.token,
        serverUrl: options.server,
        ca: options.ca,
        reconnect: false,
        startAttempts: 1,
      }).catch((error: unknown) => {
        const failure = explainFailure(error);
        throw new CheckFailure(failure.sentence, failure.hint);
      });
      const ms = Math.round(performance.now() - started);
      return { summary: `${tunnel.url} -> built-in service (bound in ${ms} ms)`, data: { url: tunnel.url, ms } };
    });
    blocked ??= tunnel === undefined ? 'the tunnel did not open' : undefined;
    const target: PublicTarget = { url: new URL(tunnel?.url ?? 'https://invalid.'), ca: options.ca };
    const tlsOk = await run('tls', async (signal) => {
      const certificate = await verifyTls(target, signal).catch((error: unknown) => {
        throw new CheckFailure(`${target.url.host} does not verify: ${describe(error)}`, isUntrusted(error) ? HINTS.tls : HINTS.server);
      });
      const issuer = [certificate.issuer?.CN ?? certificate.issuer?.O ?? 'an unnamed issuer'].flat().join(', ');
      const summary = `${target.url.host} verifies: issued by ${issuer}, valid until ${certificate.valid_to}`;
      return { summary, data: { host: target.url.host, issuer, validTo: certificate.valid_to } };
    });
    blocked ??= tlsOk ? undefined : 'TLS to the edge does not verify';
    await runPublicChecks(run, target, service, options.transferBytes);
    await run('offline', async (signal) => {
      const started = performance.now();
      await tunnel!.close();
      const page = await get1(target, '/hello', signal);
      const ms = Math.round(performance.now() - started);
      if (page.status !== 404 || !page.body.includes(Messages.TUNNEL_OFFLINE)) {
        throw new CheckFailure(`after the tunnel closed, ${target.url.host} answered ${page.status}, not the offline page`, HINTS.offline);
      }
      return { summary: `404 "${Messages.TUNNEL_OFFLINE}" ${ms} ms after the close`, data: { status: page.status, ms } };
    });
  } finally {
    await tunnel?.close();
    await service?.close();
  }
  return results;
}

type Run = (name: CheckName, work: (signal: AbortSignal) => Promise<Outcome>, timeoutMs?: number) => Promise<boolean>;

/** The checks through the public URL: HTTP/1.1, HTTP/2, WebSocket, the first event, the transfers. */
async function runPublicChecks(run: Run, target: PublicTarget, service: DoctorService | undefined, bytes: number): Promise<void> {
  const nonce = service?.nonce ?? '';
  const reply = (status: number, body: string, what: string): void => {
    if (status !== 200) throw new CheckFailure(`${what} answered ${status}`, HINTS.http1);
    if (body !== nonce) throw new CheckFailure(`${what} answered 200, but not with the built-in service's reply`, HINTS.http1);
  };
  await run('http1', async (signal) => {
    const started = performance.now();
    const answer = await get1(target, '/hello', signal);
    reply(answer.status, answer.body, 'GET over HTTP/1.1');
    const ms = Math.round(performance.now() - started);
    return { summary: `GET /hello 200 over HTTP/${answer.version} in ${ms} ms`, data: { status: answer.status, ms } };
  });
  await run('http2', async (signal) => {
    const started = performance.now();
    const answer = await get2(target, '/hello', signal);
    reply(answer.status, answer.body, 'GET over HTTP/2');
    const ms = Math.round(performance.now() - started);
    return { summary: `GET /hello 200 over HTTP/2 in ${ms} ms`, data: { status: answer.status, ms } };
  });
  await run('websocket', async (signal) => {
    const started = performance.now();
    const echoed = await webSocketEcho(target, '/ws', nonce, signal);
    if (echoed !== nonce) throw new CheckFailure('the WebSocket echo came back changed', HINTS.websocket);
    const ms = Math.round(performance.now() - started);
    return { summary: `echo in ${ms} ms`, data: { ms } };
  });
  await run('sse', async (signal) => {
    const event = await firstEvent(target, '/events', signal);
    const ms = Math.round(event.ms);
    return { summary: `first event after ${ms} ms`, data: { firstEventMs: ms } };
  });
  const transferTimeout = TRANSFER_TIMEOUT_MS + Math.ceil(bytes / (1024 * 1024)) * TRANSFER_MS_PER_MIB;
  await run(
    'upload',
    async (signal) => {
      const started = performance.now();
      const { sent, received } = await upload(target, '/upload', bytes, signal);
      if (sent.sha256 !== received.sha256 || sent.bytes !== received.bytes) {
        throw new CheckFailure(
          `the service received ${received.bytes} bytes with sha256 ${received.sha256}, not what was sent`,
          HINTS.upload,
        );
      }
      return transferOutcome(bytes, performance.now() - started, sent.sha256);
    },
    transferTimeout,
  );
  await run(
    'download',
    async (signal) => {
      const started = performance.now();
      const got = await download(target, `/download?bytes=${bytes}`, signal);
      const sent = service?.lastDownload;
      if (sent === undefined || sent.sha256 !== got.sha256 || sent.bytes !== got.bytes) {
        throw new CheckFailure(`received ${got.bytes} bytes with sha256 ${got.sha256}, not what the service sent`, HINTS.download);
      }
      return transferOutcome(bytes, performance.now() - started, got.sha256);
    },
    transferTimeout,
  );
}

/** The figure of a transfer: size, time, rate and the matching sha256. */
function transferOutcome(bytes: number, ms: number, sha256: string): Outcome {
  const mib = bytes / (1024 * 1024);
  const rate = mib / Math.max(ms / 1000, 0.001);
  const size = mib >= 1 ? `${Math.round(mib * 10) / 10} MiB` : `${bytes} bytes`;
  return {
    summary: `${size} in ${(ms / 1000).toFixed(2)} s (${rate.toFixed(1)} MiB/s), sha256 ${sha256.slice(0, 12)}… matches`,
    data: { bytes, ms: Math.round(ms), mibPerSecond: Math.round(rate * 10) / 10, sha256 },
  };
}

/** The token check: GET /v1/me and /v1/usage with it. */
async function checkToken(options: DoctorOptions, signal: AbortSignal): Promise<Outcome> {
  const invalid = explainFailure(new SvcError(ErrorCode.TOKEN_INVALID, Messages.TOKEN_INVALID));
  if (options.token === undefined || !TOKEN_SHAPE.test(options.token)) throw new CheckFailure(invalid.sentence, invalid.hint);
  const [me, usage] = await Promise.all([
    getJson(options.server, '/v1/me', options.token, options.ca, signal),
    getJson(options.server, '/v1/usage', options.token, options.ca, signal),
  ]);
  if (me.status === 401 || usage.status === 401) throw new CheckFailure(`${invalid.sentence} (the server answered 401)`, invalid.hint);
  if (me.status !== 200 || usage.status !== 200)
    throw new CheckFailure(`GET /v1/me answered ${me.status}, /v1/usage ${usage.status}`, HINTS.server);
  const account = me.json as { email: string; plan: string };
  const { used, limits } = usage.json as { used: { tunnels: number }; limits: { tunnels: number } };
  return {
    summary: `valid: ${account.email}, plan ${account.plan} (${used.tunnels} of ${limits.tunnels} tunnels in use)`,
    data: { email: account.email, plan: account.plan, tunnels: used.tunnels, tunnelLimit: limits.tunnels },
  };
}

/** The clock check, from the Date header of the server check's answer. */
function clockCheck(answer: ServerAnswer): Outcome {
  if (answer.dateMs === undefined) throw new CheckFailure('the server sent no Date header', HINTS.server);
  // Date has whole seconds: compare with the middle of the round trip.
  const offsetMs = answer.dateMs - (answer.sentMs + answer.answeredMs) / 2;
  const text = `${offsetMs >= 0 ? '+' : '-'}${(Math.abs(offsetMs) / 1000).toFixed(1)} s`;
  if (Math.abs(offsetMs) > MAX_CLOCK_SKEW_MS) {
    throw new CheckFailure(`this clock is ${text} off the server's (more than ${MAX_CLOCK_SKEW_MS / 1000} s)`, HINTS.clock);
  }
  return { summary: `server clock ${text} from this one (within ${MAX_CLOCK_SKEW_MS / 1000} s)`, data: { offsetMs: Math.round(offsetMs) } };
}
