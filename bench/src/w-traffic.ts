import type { LoadGenerator } from './loadgen.js';
import type { Sizes } from './options.js';
import type { BenchSystem } from './system.js';
import { compare, type AccessRuleResult } from './w-access.js';

/** Tunnels of this workload: one with three header rules, one with a rate limit no visitor reaches. */
const HEADERS_SUBDOMAIN = 'xheaders';
const LIMIT_SUBDOMAIN = 'xlimit';

export interface TrafficResult {
  /** A request header set, one removed and a response header set. */
  headerRules: AccessRuleResult;
  /** A rate limit of a million requests a second: counted on every request, never reached. */
  rateLimit: AccessRuleResult;
}

/** W1 through a tunnel with traffic rules against the tunnel without rules, in matched pairs: what the rules cost the request path. */
export async function trafficRules(
  system: BenchSystem,
  generator: LoadGenerator,
  sizes: Sizes,
  log: (line: string) => void,
): Promise<TrafficResult> {
  const headersAgent = await system.startAgent(HEADERS_SUBDOMAIN, false, [
    '--request-header-add',
    'X-Env: bench',
    '--request-header-remove',
    'Cookie',
    '--response-header-add',
    'X-Frame-Options: DENY',
  ]);
  const limitAgent = await system.startAgent(LIMIT_SUBDOMAIN, false, ['--rate-limit', '1000000/1s']);
  const headerRules = await compare(system, generator, sizes, log, '3 headers', headersAgent, { host: `${HEADERS_SUBDOMAIN}.localhost` });
  const rateLimit = await compare(system, generator, sizes, log, 'rate limit', limitAgent, { host: `${LIMIT_SUBDOMAIN}.localhost` });
  return { headerRules, rateLimit };
}
