import { ErrorCode, Messages, SVC_VERSION, SvcError } from '@svcrouter/protocol';
import { DEFAULT_SERVER_URL, forward, parseLocalTarget, type Tunnel } from '@svcrouter/sdk';
import type { Output } from './output.js';

/** The agent's environment, read once by main.ts. */
export interface AgentEnv {
  /** SVC_TOKEN: required for `http`. Never trimmed or repaired. */
  token: string | undefined;
  /** SVC_SUBDOMAIN: optional pinned subdomain. */
  subdomain: string | undefined;
  /** SVC_DOMAIN: optional verified custom domain. */
  domain: string | undefined;
  /** SVC_SERVER: edge URL, default http://localhost:8080. */
  server: string | undefined;
  /** SVC_CA_FILE contents: extra CA to trust for an https edge with a dev certificate. */
  ca: string | undefined;
}

const USAGE = `Usage:
  svc http <port | host:port | http(s)://host:port>   expose a local HTTP service
  svc version                                          print the agent version

Environment:
  SVC_TOKEN       agent token (svc_…), required
  SVC_SUBDOMAIN   pin the subdomain (default: a random name each run)
  SVC_DOMAIN      bind on a verified custom domain
  SVC_SERVER      edge URL (default ${DEFAULT_SERVER_URL})
  SVC_CA_FILE     PEM file of an extra CA to trust for an https edge`;

/** Only this shape is a token; anything else (quotes, spaces, other prefixes) is refused as-is. */
const TOKEN_SHAPE = /^svc_[A-Za-z0-9_-]{43}$/;

/**
 * Runs the CLI. Resolves with the exit code once a command completes; for `http` that is
 * when the tunnel ends (signal, release by the server, fatal error).
 */
export async function runCli(
  argv: string[],
  env: AgentEnv,
  output: Output,
  signals: { onStop(handler: () => void): void },
): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'version' || command === '--version' || command === '-v') {
    output.info(`svc ${SVC_VERSION}`);
    return 0;
  }
  if (command === 'help' || command === '--help' || command === '-h') {
    output.info(USAGE);
    return 0;
  }
  if (command !== 'http' || rest.length !== 1) {
    output.error(USAGE);
    return 2;
  }
  const target = parseLocalTarget(rest[0]!);
  if (typeof target === 'string') {
    output.error(target);
    return 2;
  }
  if (env.token === undefined || !TOKEN_SHAPE.test(env.token)) {
    output.error(Messages.TOKEN_INVALID);
    return 1;
  }
  // Signals are watched before anything is dialled or printed: a script that sends SIGTERM
  // as soon as it reads the Forwarding line must get the clean close, not Node's default.
  let requestStop!: () => void;
  const stopRequested = new Promise<void>((resolve) => (requestStop = resolve));
  signals.onStop(() => requestStop());

  const server = env.server || DEFAULT_SERVER_URL;
  const starting = forward({
    addr: target.origin,
    token: env.token,
    serverUrl: server,
    subdomain: env.subdomain || undefined,
    domain: env.domain || undefined,
    ca: env.ca,
  });
  const started = await Promise.race([
    starting.then(
      (tunnel) => ({ tunnel }),
      (error: unknown) => ({ error }),
    ),
    stopRequested.then(() => undefined),
  ]);
  if (started === undefined) {
    // Stopped while connecting: give back whatever the edge may still bind, then leave.
    void starting.then((tunnel) => tunnel.close(), () => undefined);
    return 0;
  }
  if ('error' in started) {
    output.error(describe(started.error));
    return 1;
  }
  const tunnel: Tunnel = started.tunnel;
  output.forwarding(tunnel.url, target.origin);
  tunnel.on('request', (log) => output.request(log));
  // One line per episode of lost connection, however many dials it takes, and one when back.
  tunnel.on('reconnecting', ({ attempt, reason }: { attempt: number; reason: string }) => {
    if (attempt === 1) output.reconnecting(reason);
  });
  tunnel.on('reconnected', (url: string) => output.reconnected(url, target.origin));
  return new Promise<number>((resolve) => {
    // close() resolves, and 'end' fires, once the edge has taken the tunnel off.
    void stopRequested.then(() => tunnel.close());
    tunnel.once('end', (error?: SvcError) => {
      if (!error) return resolve(0);
      output.error(error.message);
      resolve(error.code === ErrorCode.TUNNEL_RELEASED ? 0 : 1);
    });
  });
}

/** One sentence for a failure to start a tunnel. */
function describe(error: unknown): string {
  if (error instanceof SvcError) return error.message;
  return `cannot start the tunnel: ${error instanceof Error ? error.message : String(error)}`;
}
