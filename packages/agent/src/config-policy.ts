import type { TrafficRule } from '@svcrouter/protocol';
import { mergedPolicy, trafficProblem, TRAFFIC_OPTION_KEYS, type PolicyBlock } from '@svcrouter/sdk';
import { z } from 'zod';
import { trafficOptionsOf } from './traffic-flags.js';

/** A config file's traffic keys, on a tunnel or in its `policy:` block; their values are checked by checkPolicy. */
export const TRAFFIC_FIELDS = {
  /** `Name: value` headers set on every request to the local service (default none). */
  requestHeaderAdd: z.array(z.string()).optional(),
  /** Header names removed from every request (default none). */
  requestHeaderRemove: z.array(z.string()).optional(),
  /** `Name: value` headers set on every response (default none). */
  responseHeaderAdd: z.array(z.string()).optional(),
  /** Header names removed from every response (default none). */
  responseHeaderRemove: z.array(z.string()).optional(),
  /** `100/1m` (s, m, h) or {count, windowMs} per visitor address (default no limit). */
  rateLimit: z.union([z.string(), z.strictObject({ count: z.number(), windowMs: z.number() })]).optional(),
  /** `provider:secret` or {provider, secret, maxBody} (default no check). */
  verifyWebhook: z
    .union([
      z.string(),
      z.strictObject({ provider: z.string(), secret: z.string(), maxBody: z.union([z.number(), z.string()]).optional() }),
    ])
    .optional(),
  /** Largest webhook body checked (default 1MiB). */
  verifyWebhookMaxBody: z.union([z.number(), z.string()]).optional(),
  /** Edge rules in order, each a match and one of redirect, respond, rewrite (default none). */
  rules: z
    .array(
      z.custom<TrafficRule>((value) => typeof value === 'object' && value !== null, 'expected a rule: {match, redirect|respond|rewrite}'),
    )
    .optional(),
};

/** The keys of a tunnel's `policy:` block (picked from the tunnel's own, with the same checks). */
export const POLICY_BLOCK_KEYS = {
  basicAuth: true,
  cidrAllow: true,
  cidrDeny: true,
  oidc: true,
  allowEmail: true,
  allowDomain: true,
  requestHeaderAdd: true,
  requestHeaderRemove: true,
  responseHeaderAdd: true,
  responseHeaderRemove: true,
  rateLimit: true,
  verifyWebhook: true,
  verifyWebhookMaxBody: true,
  rules: true,
} as const;

type PolicyFields = PolicyBlock & { proto?: string; policy?: PolicyBlock };

/**
 * The checks a schema cannot say alone: the traffic keys' values (as the edge will check them),
 * the access rules' pairings inside a `policy:` block, a key given both on the tunnel and in its
 * block, and that a TCP tunnel has none. Each problem points at the key at fault.
 */
export function checkPolicy(tunnel: PolicyFields, context: z.RefinementCtx): void {
  const add = (problem: string | undefined, base: Array<string | number>, value: unknown): void => {
    if (problem !== undefined) context.addIssue({ code: 'custom', ...located(problem, base, value) });
  };
  if (tunnel.proto === 'tcp') {
    for (const key of [...TRAFFIC_OPTION_KEYS, 'policy'] as const) {
      if (tunnel[key] !== undefined)
        context.addIssue({ code: 'custom', message: 'applies to HTTP tunnels only, not proto: tcp', path: [key] });
    }
    return;
  }
  for (const problem of trafficProblems(tunnel)) add(problem, [], tunnel);
  const block = tunnel.policy;
  if (block === undefined) return;
  for (const problem of trafficProblems(block)) add(problem, ['policy'], block);
  for (const key of ['allowEmail', 'allowDomain'] as const) {
    if (block[key] !== undefined && block.oidc === undefined && tunnel.oidc === undefined)
      add(`${key}: needs oidc (the provider visitors sign in with)`, ['policy'], block);
  }
  if (block.oidc !== undefined && (block.basicAuth !== undefined || tunnel.basicAuth !== undefined))
    add('oidc: cannot be combined with basicAuth', ['policy'], block);
  const merged = mergedPolicy(tunnel);
  if (typeof merged === 'string') add(merged, ['policy'], block);
}

/** The problem of each traffic key on its own (the webhook's size with the webhook), so a file's every mistake is reported. */
function trafficProblems(fields: PolicyBlock): string[] {
  const options = trafficOptionsOf({ ...fields, policy: undefined });
  const problems: string[] = [];
  for (const key of TRAFFIC_OPTION_KEYS) {
    if (options[key] === undefined || (key === 'verifyWebhookMaxBody' && options.verifyWebhook !== undefined)) continue;
    const single =
      key === 'verifyWebhook'
        ? { verifyWebhook: options.verifyWebhook, verifyWebhookMaxBody: options.verifyWebhookMaxBody }
        : { [key]: options[key] };
    const problem = trafficProblem(single);
    if (problem !== undefined) problems.push(problem);
  }
  return problems;
}

/**
 * A problem `rules[1].redirect.to: message` as an issue at the deepest part of that path the file
 * has (`policy.rules.1.redirect.to`), the rest of the path kept in front of the message.
 */
function located(problem: string, base: Array<string | number>, value: unknown): { path: Array<string | number>; message: string } {
  const match = /^([A-Za-z]+(?:\[\d+\]|\.[A-Za-z]+)*): (.*)$/s.exec(problem);
  if (!match) return { path: base, message: problem };
  const parts = match[1]!.split(/\.|(?=\[)/).map((part) => (part.startsWith('[') ? Number(part.slice(1, -1)) : part));
  const path = [...base];
  let node = value;
  let taken = 0;
  for (const part of parts) {
    if (node === null || typeof node !== 'object' || (node as Record<string | number, unknown>)[part] === undefined) break;
    node = (node as Record<string | number, unknown>)[part];
    path.push(part);
    taken++;
  }
  const rest = parts.slice(taken).join('.');
  return { path, message: rest === '' ? match[2]! : `${rest}: ${match[2]!}` };
}
