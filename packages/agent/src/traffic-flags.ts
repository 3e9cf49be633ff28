import { TRAFFIC_OPTION_KEYS, type PolicyBlock, type TrafficOptions } from '@svcrouter/sdk';

/** The traffic flags of `svc http` (parseArgs options); checked with the access flags by accessProblem. */
export const TRAFFIC_FLAG_OPTIONS = {
  'request-header-add': { type: 'string', multiple: true },
  'request-header-remove': { type: 'string', multiple: true },
  'response-header-add': { type: 'string', multiple: true },
  'response-header-remove': { type: 'string', multiple: true },
  'rate-limit': { type: 'string' },
  'verify-webhook': { type: 'string' },
  'verify-webhook-max-body': { type: 'string' },
} as const;

/** The usage lines of the traffic flags. */
export const TRAFFIC_FLAG_USAGE = `  --request-header-add <'Name: value'>   set a header on requests (repeatable)
  --request-header-remove <name>         remove a header from requests (repeatable)
  --response-header-add <'Name: value'>  set a header on responses (repeatable)
  --response-header-remove <name>        remove a header from responses (repeatable)
  --rate-limit <count/window>            per visitor address, e.g. 100/1m (s, m, h); over it 429
  --verify-webhook <provider:secret>     check signatures: github, stripe, slack, shopify, twilio, standard
  --verify-webhook-max-body <size>       largest webhook body checked (default 1MiB); larger: 413`;

type TrafficFlagValues = { [key in keyof typeof TRAFFIC_FLAG_OPTIONS]?: string | string[] | undefined };

/** The traffic options the flags give (none given: an empty object). */
export function trafficFlags(values: TrafficFlagValues): TrafficOptions {
  const options: TrafficOptions = {};
  for (const key of TRAFFIC_OPTION_KEYS) {
    const flag = key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`) as keyof TrafficFlagValues;
    const value = values[flag];
    if (value !== undefined) (options as Record<string, unknown>)[key] = value;
  }
  return options;
}

/** The traffic keys and the `policy` block of a flag set, a config file's tunnel or an agent API body. */
export function trafficOptionsOf(source: TrafficOptions & { policy?: PolicyBlock | undefined }): TrafficOptions & { policy?: PolicyBlock } {
  const options: TrafficOptions & { policy?: PolicyBlock } = {};
  for (const key of TRAFFIC_OPTION_KEYS) {
    if (source[key] !== undefined) (options as Record<string, unknown>)[key] = source[key];
  }
  if (source.policy !== undefined) options.policy = source.policy;
  return options;
}
