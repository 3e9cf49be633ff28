import path from 'node:path';
import { ErrorCode, Messages, SVC_VERSION, SvcError } from '@svcrouter/protocol';
import {
  DEFAULT_SERVER_URL,
  accessProblem,
  hostHeaderProblem,
  parseLocalTarget,
  parseServerUrls,
  parseTcpTarget,
  splitList,
  type AccessOptions,
  type LocalTarget,
  type TcpTarget,
} from '@svcrouter/sdk';
import { parseCommand, USAGE, type Command, type InspectFlags, type TcpFlags } from './args.js';
import { startInspection } from './inspection.js';
import { doctor } from './doctor-command.js';
import type { TunnelControlSlot } from './inspector/tunnels-api.js';
import { formatProblems, loadConfigFile } from './config-file.js';
import { routeOptionsOf } from './config-routes.js';
import { TOKEN_SHAPE, type ConfigFile, type InspectorConfig } from './config-schema.js';
import { readCaFile } from './ca-file.js';
import { envBasicAuthPairs } from './env-basic-auth.js';
import { explainFailure, type Failure } from './failure.js';
import type { Output } from './output.js';
import { runTunnels, type RunHooks, type SessionSpec, type TunnelSpec } from './run-tunnels.js';
import { readTlsPair } from './tls-flags.js';
import { trafficOptionsOf } from './traffic-flags.js';

/** The agent's environment, read once by main.ts. */
export interface AgentEnv {
  /** SVC_TOKEN: required for `http`. Never trimmed or repaired. */
  token: string | undefined;
  /** SVC_SUBDOMAIN: optional pinned subdomain. */
  subdomain: string | undefined;
  /** SVC_DOMAIN: optional verified custom domain. */
  domain: string | undefined;
  /** SVC_HOST_HEADER: `rewrite` or the Host sent to the local service (as --host-header). */
  hostHeader: string | undefined;
  /** SVC_SERVER: edge URL, default http://localhost:8080. */
  server: string | undefined;
  /** SVC_CA_FILE: path of an extra CA (PEM) to trust for an https edge with a dev certificate. */
  caFile: string | undefined;
  /** SVC_BASIC_AUTH: comma-separated `user:password` pairs (as --basic-auth). */
  basicAuth?: string | undefined;
  /** SVC_CIDR_ALLOW / SVC_CIDR_DENY: comma-separated CIDRs (as --cidr-allow / --cidr-deny). */
  cidrAllow?: string | undefined;
  cidrDeny?: string | undefined;
}

/** How the composition root builds the output once the command says which mode it wants. */
export type OutputFactory = (command: Command) => Output;

/**
 * Runs the CLI. Resolves with the exit code once a command completes; for `http` that is
 * when the tunnel ends (signal, release by the server, fatal error).
 */
export async function runCli(
  argv: string[],
  env: AgentEnv,
  makeOutput: OutputFactory,
  hooks: RunHooks,
): Promise<{ code: number; output: Output }> {
  const command = parseCommand(argv);
  if (typeof command === 'string') {
    const output = makeOutput({ kind: 'help' });
    // One line and a pointer, not the whole usage: the mistake stays on the screen.
    output.error(`${command}\nhint: svc help lists the commands and their flags`);
    return { code: 2, output };
  }
  const output = makeOutput(command);
  return { code: await runCommand(command, env, output, hooks), output };
}

async function runCommand(command: Command, env: AgentEnv, output: Output, hooks: RunHooks): Promise<number> {
  switch (command.kind) {
    case 'version':
      output.info(`svc ${SVC_VERSION}`);
      return 0;
    case 'help':
      output.info(USAGE);
      return 0;
    case 'http': {
      const target = parseLocalTarget(command.target, command.tunnel.proto);
      if (typeof target === 'string') {
        output.error(target);
        return 2;
      }
      const envHostHeader = checkedEnvHostHeader(env);
      if (typeof envHostHeader === 'object') {
        output.error(envHostHeader.problem);
        return 2;
      }
      const session = sessionSpec(env, undefined);
      if (!('token' in session)) return fail(output, session);
      const spec: TunnelSpec = { name: '', target, subdomain: command.tunnel.subdomain, domain: command.tunnel.domain };
      const hostHeader = command.tunnel.hostHeader ?? envHostHeader;
      if (hostHeader !== undefined) spec.hostHeader = hostHeader;
      if (command.tunnel.pool === true) spec.pool = true;
      if (command.tunnel.routes !== undefined) spec.routes = command.tunnel.routes;
      spec.subdomain ??= env.subdomain || undefined;
      spec.domain ??= env.domain || undefined;
      const access = accessRules(command.tunnel, env);
      if (typeof access === 'string') {
        output.error(access);
        return 2;
      }
      spec.access = access;
      return runInspected([spec], session, command.inspect, undefined, output, hooks);
    }
    case 'doctor':
      return doctor(command, { token: env.token, server: env.server, caFile: env.caFile }, output);
    case 'tcp': {
      const target = parseTcpTarget(command.target);
      if (typeof target === 'string') {
        output.error(target);
        return 2;
      }
      const envRules = accessVariableSet(env);
      if (envRules !== undefined) {
        const kind = command.tcp.tls === undefined ? 'tcp' : 'tls';
        output.error(
          `${envRules} is set, but access rules apply to HTTP tunnels only: svc ${kind} would let every visitor through; unset it to run svc ${kind}`,
        );
        return 2;
      }
      const session = sessionSpec(env, undefined);
      if (!('token' in session)) return fail(output, session);
      const tcp = withTlsFiles(command.tcp, env);
      if (typeof tcp === 'string') {
        output.error(tcp);
        return 2;
      }
      // No local inspector: it shows HTTP requests, and a TCP tunnel's connections are lines.
      return runTunnels([{ name: '', target, tcp }], session, output, hooks);
    }
    case 'config-check': {
      const loaded = loadConfigFile(command.configPath);
      if (!loaded.ok) {
        output.error(formatProblems(command.configPath, loaded.problems));
        return 1;
      }
      const names = Object.keys(loaded.config.tunnels);
      output.info(`${command.configPath} is valid: ${names.length} tunnel${names.length === 1 ? '' : 's'} (${names.join(', ')})`);
      return 0;
    }
    case 'start': {
      const loaded = loadConfigFile(command.configPath);
      if (!loaded.ok) {
        output.error(formatProblems(command.configPath, loaded.problems));
        return 1;
      }
      const envHostHeader = checkedEnvHostHeader(env);
      if (typeof envHostHeader === 'object') {
        output.error(envHostHeader.problem);
        return 2;
      }
      const envAccess = accessRules({}, env);
      if (typeof envAccess === 'string') {
        output.error(envAccess);
        return 2;
      }
      const specs = tunnelSpecs(loaded.config, command.names, { ...env, hostHeader: envHostHeader }, envAccess);
      if (typeof specs === 'string') {
        output.error(specs);
        return 2;
      }
      const envRules = accessVariableSet(env);
      const passThrough = specs.find((spec) => spec.tcp !== undefined);
      if (envRules !== undefined && passThrough !== undefined) {
        output.error(
          `${envRules} is set, but access rules apply to HTTP tunnels only, and tunnel ${passThrough.name} is proto: ${passThrough.tcp!.tls === undefined ? 'tcp' : 'tls'}; unset it, or start the HTTP tunnels by name`,
        );
        return 2;
      }
      // A TLS tunnel's certificate files are read relative to the config file.
      for (const spec of specs) {
        if (spec.tcp?.tls === undefined) continue;
        const tcp = withTlsFiles(spec.tcp, { ...env, subdomain: undefined, domain: undefined }, path.dirname(command.configPath));
        if (typeof tcp === 'string') {
          output.error(`${spec.name}: ${tcp}`);
          return 2;
        }
        spec.tcp = tcp;
      }
      const session = sessionSpec(env, loaded.config);
      if (!('token' in session)) return fail(output, session);
      const inspected = specs.filter((spec) => loaded.config.tunnels[spec.name]!.inspect !== false);
      return runInspected(specs, session, command.inspect, loaded.config.inspector, output, hooks, inspected);
    }
  }
}

/** `svc tls`'s flags with SVC_SUBDOMAIN / SVC_DOMAIN as defaults and its certificate files read; `svc tcp`'s as given. */
function withTlsFiles(tcp: TcpFlags, env: AgentEnv, base?: string): TcpFlags | string {
  if (tcp.tls === undefined) return tcp;
  const tls = readTlsPair(tcp.tls, base);
  if (typeof tls === 'string') return tls;
  if (tls.subdomain === undefined && tls.domain === undefined) {
    if (env.subdomain) tls.subdomain = env.subdomain;
    if (env.domain) tls.domain = env.domain;
  }
  return { ...tcp, tls };
}

/** SVC_HOST_HEADER when set, checked as --host-header is: a bad value is a usage error. */
function checkedEnvHostHeader(env: AgentEnv): string | undefined | { problem: string } {
  if (!env.hostHeader) return undefined;
  const problem = hostHeaderProblem(env.hostHeader);
  return problem === undefined
    ? env.hostHeader
    : { problem: `SVC_HOST_HEADER: ${problem}\nhint: set it to rewrite or a host such as localhost:5173, or unset it` };
}

/**
 * The tunnels `svc start` runs: those named, else all, in file order. SVC_SUBDOMAIN,
 * SVC_DOMAIN and SVC_HOST_HEADER override the file only when one tunnel starts: two tunnels
 * cannot share a name, and each has its own local target.
 */
function tunnelSpecs(config: ConfigFile, names: string[], env: AgentEnv, envAccess: AccessOptions): TunnelSpec[] | string {
  const known = Object.keys(config.tunnels);
  const unknown = names.filter((name) => !known.includes(name));
  if (unknown.length > 0) return `no tunnel named ${unknown.join(', ')} in the config file (it has: ${known.join(', ')})`;
  const picked = names.length > 0 ? [...new Set(names)] : known;
  return picked.map((name) => {
    const tunnel = config.tunnels[name]!;
    if (tunnel.proto === 'tcp' || tunnel.proto === 'tls') {
      const tcp: TcpFlags = {};
      if (tunnel.proto === 'tls') {
        tcp.tls = {};
        const subdomain = picked.length === 1 ? env.subdomain || tunnel.subdomain : tunnel.subdomain;
        const domain = picked.length === 1 ? env.domain || tunnel.domain : tunnel.domain;
        if (subdomain !== undefined) tcp.tls.subdomain = subdomain;
        if (domain !== undefined) tcp.tls.domain = domain;
        if (tunnel.tlsCert !== undefined) tcp.tls.certFile = tunnel.tlsCert;
        if (tunnel.tlsKey !== undefined) tcp.tls.keyFile = tunnel.tlsKey;
      }
      if (tunnel.remoteAddr !== undefined) tcp.remoteAddr = tunnel.remoteAddr;
      if (tunnel.idleTimeoutMs !== undefined) tcp.idleTimeoutMs = tunnel.idleTimeoutMs;
      if (tunnel.proxyProtocol !== undefined) tcp.proxyProtocol = tunnel.proxyProtocol;
      if (tunnel.pool === true) tcp.pool = true;
      // The schema checked the address already.
      return { name, target: parseTcpTarget(tunnel.addr) as TcpTarget, tcp };
    }
    // The schema checked the address already.
    const spec: TunnelSpec = { name, target: parseLocalTarget(tunnel.addr, tunnel.proto) as LocalTarget };
    const subdomain = picked.length === 1 ? env.subdomain || tunnel.subdomain : tunnel.subdomain;
    const domain = picked.length === 1 ? env.domain || tunnel.domain : tunnel.domain;
    if (subdomain !== undefined) spec.subdomain = subdomain;
    if (domain !== undefined) spec.domain = domain;
    const hostHeader = picked.length === 1 ? env.hostHeader || tunnel.hostHeader : tunnel.hostHeader;
    if (hostHeader !== undefined) spec.hostHeader = hostHeader;
    if (tunnel.pool === true) spec.pool = true;
    const routes = routeOptionsOf(tunnel.routes);
    if (routes !== undefined) spec.routes = routes;
    // Rules set in the environment apply to every tunnel started, each key replacing the file's.
    spec.access = {
      basicAuth: envAccess.basicAuth ?? tunnel.basicAuth,
      cidrAllow: envAccess.cidrAllow ?? tunnel.cidrAllow,
      cidrDeny: envAccess.cidrDeny ?? tunnel.cidrDeny,
      oidc: tunnel.oidc,
      allowEmail: tunnel.allowEmail,
      allowDomain: tunnel.allowDomain,
      ...trafficOptionsOf(tunnel),
    };
    return spec;
  });
}

/** The first SVC_* variable of access rules that is set, for the commands they cannot apply to. */
function accessVariableSet(env: AgentEnv): string | undefined {
  if (splitList(env.basicAuth).length > 0) return 'SVC_BASIC_AUTH';
  if (splitList(env.cidrAllow).length > 0) return 'SVC_CIDR_ALLOW';
  if (splitList(env.cidrDeny).length > 0) return 'SVC_CIDR_DENY';
  return undefined;
}

/**
 * A tunnel's access rules: each flag given wins, else its SVC_* variable (comma-separated).
 * A bad variable is a usage error naming it; the message never holds a password.
 */
function accessRules(flags: AccessOptions, env: AgentEnv): AccessOptions | string {
  const fromEnv: AccessOptions = {};
  const pairs = envBasicAuthPairs(env.basicAuth);
  if (typeof pairs === 'string') return pairs;
  if (pairs.length > 0) fromEnv.basicAuth = pairs;
  const allow = splitList(env.cidrAllow);
  if (allow.length > 0) fromEnv.cidrAllow = allow;
  const deny = splitList(env.cidrDeny);
  if (deny.length > 0) fromEnv.cidrDeny = deny;
  const problem = accessProblem(fromEnv);
  if (problem !== undefined) {
    const name = problem.startsWith('basicAuth') ? 'SVC_BASIC_AUTH' : problem.startsWith('cidrAllow') ? 'SVC_CIDR_ALLOW' : 'SVC_CIDR_DENY';
    return `${name}: ${problem.slice(problem.indexOf(':') + 2)}`;
  }
  const rules: AccessOptions = {};
  const basicAuth = flags.basicAuth ?? fromEnv.basicAuth;
  if (basicAuth !== undefined) rules.basicAuth = basicAuth;
  const cidrAllow = flags.cidrAllow ?? fromEnv.cidrAllow;
  if (cidrAllow !== undefined) rules.cidrAllow = cidrAllow;
  const cidrDeny = flags.cidrDeny ?? fromEnv.cidrDeny;
  if (cidrDeny !== undefined) rules.cidrDeny = cidrDeny;
  if (flags.oidc !== undefined) rules.oidc = flags.oidc;
  if (flags.allowEmail !== undefined) rules.allowEmail = flags.allowEmail;
  if (flags.allowDomain !== undefined) rules.allowDomain = flags.allowDomain;
  Object.assign(rules, trafficOptionsOf(flags));
  return rules;
}

/** Starts the local inspector (unless off), then the tunnels; `inspected` defaults to all of them. */
async function runInspected(
  specs: TunnelSpec[],
  session: SessionSpec,
  flags: InspectFlags,
  file: InspectorConfig | undefined,
  output: Output,
  hooks: RunHooks,
  inspected: TunnelSpec[] = specs,
): Promise<number> {
  // The agent API on the inspector's port answers 503 until the tunnels are live.
  const control: TunnelControlSlot = { current: undefined };
  const inspection = await startInspection(flags, file, control);
  if (inspection !== undefined && !('inspector' in inspection)) return fail(output, inspection);
  for (const spec of inspected) spec.inspector = inspection?.inspector;
  try {
    return await runTunnels(specs, session, output, {
      ...hooks,
      inspector: inspection?.inspector,
      onStarted: (agent) => {
        control.current = agent;
        if (inspection) output.inspecting(inspection.server.url);
      },
    });
  } finally {
    await inspection?.server.close();
  }
}

/** The shared session settings: environment first, then the config file's values. */
export function sessionSpec(env: AgentEnv, file: { token?: string; server?: string } | undefined): SessionSpec | Failure {
  const token = env.token || file?.token;
  if (token === undefined || !TOKEN_SHAPE.test(token)) {
    return explainFailure(new SvcError(ErrorCode.TOKEN_INVALID, Messages.TOKEN_INVALID));
  }
  const spec: SessionSpec = { token, server: env.server || file?.server || DEFAULT_SERVER_URL };
  try {
    parseServerUrls(spec.server);
  } catch (error) {
    return explainFailure(error);
  }
  if (env.caFile) {
    const ca = readCaFile(env.caFile);
    if (typeof ca !== 'string') return ca;
    spec.ca = ca;
  }
  return spec;
}

function fail(output: Output, failure: Failure): number {
  output.failure(failure);
  return 1;
}
