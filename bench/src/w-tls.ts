import { runLoad, type LoadGenerator } from './loadgen.js';
import type { Sizes } from './options.js';
import type { Proc } from './proc.js';
import { matchedPairs, median, summarise } from './stats.js';
import { smallGetSpec, tunnelLoad, type TunnelLoad } from './w-small-get.js';
import type { BenchSystem } from './system.js';

/** Subdomain of the tunnel whose agent session runs over TLS. */
const TLS_SUBDOMAIN = 'xtls';

export interface TlsSessionResult {
  /** Small GET through the plain-session tunnel vs the TLS-session tunnel (same visitor side: plain HTTP). */
  rps: { plain: number; tls: number; ratio: number };
  /** Median CPU microseconds per request, edge + agent, for each. */
  cpuUsPerRequest: { plain: number; tls: number };
}

/**
 * W1 again, but the agent's session to the edge is TLS (`SVC_SERVER=https://…` with the dev CA),
 * in matched pairs against the plain-session agent. Visitors still speak plain HTTP to the edge,
 * so the difference is the cost of encrypting the tunnel itself.
 */
export async function tlsSession(
  system: BenchSystem,
  generator: LoadGenerator,
  sizes: Sizes,
  log: (line: string) => void,
): Promise<TlsSessionResult> {
  const tlsAgent = await system.startAgent(TLS_SUBDOMAIN, true);
  const host = (side: 'direct' | 'tunnel'): string => (side === 'tunnel' ? `${TLS_SUBDOMAIN}.localhost` : 'x.localhost');
  const agentOf = (side: 'direct' | 'tunnel'): Proc => (side === 'tunnel' ? tlsAgent : system.agent);
  const spec = (side: 'direct' | 'tunnel', durationS: number) => ({
    ...smallGetSpec(system, 'tunnel', sizes, durationS),
    host: host(side),
  });
  if (sizes.w1WarmupS > 0) await runLoad(generator, spec('tunnel', sizes.w1WarmupS));
  // 'direct' is the plain session here, 'tunnel' the TLS one.
  const pairs = await matchedPairs<TunnelLoad>(sizes.w1Rounds, async (side) => {
    const run = await tunnelLoad(system, generator, spec(side, sizes.w1DurationS), agentOf(side).pid);
    log(
      `  W1 ${side === 'tunnel' ? 'tls   ' : 'plain '} ${run.rps.toFixed(0)} req/s  p99 ${run.p99Ms.toFixed(2)} ms  errors ${run.errors}`,
    );
    return run;
  });
  const perRequest = (runs: TunnelLoad[]): number => median(runs.map((r) => ((r.edgeCpuS + r.agentCpuS) * 1e6) / Math.max(1, r.requests)));
  const rps = summarise(pairs, (r) => r.rps);
  return {
    rps: { plain: rps.direct, tls: rps.tunnel, ratio: rps.ratio },
    cpuUsPerRequest: { plain: perRequest(pairs.map((p) => p.direct)), tls: perRequest(pairs.map((p) => p.tunnel)) },
  };
}
