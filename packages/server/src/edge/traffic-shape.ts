import type { RequestHead } from '@svcrouter/protocol';
import type { TrafficRules } from '../policy/index.js';

/**
 * Applies a tunnel's traffic rules to a request head built by the forwarding rules: the target a
 * rule rewrote it to, and the request header rules. The forwarding headers were set by the edge
 * and no header rule may name them (policyProblem), so they pass through untouched.
 */
export function shapeRequest(head: RequestHead, traffic: TrafficRules, target: string | undefined): void {
  if (target !== undefined) head.p = target;
  if (traffic.requestHeaders !== undefined) head.h = traffic.requestHeaders.apply(head.h);
}
