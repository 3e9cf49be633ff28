import type { AccessCheck, Identity, Verdict } from '../policy/index.js';
import type { EdgeExchange } from './exchange.js';
import { passOn, type TrafficVisitor, type WebhookVerifier } from './traffic-step.js';
import { deniedPage, type EdgePage } from './pages.js';

/** What a settled verdict does: pass the request on (with the identity to forward, if any), or answer it. */
export interface VerdictActions {
  pass(identity: Identity | undefined): void;
  refuse(page: EdgePage): void;
}

/** Carries out a settled verdict of the access rules (the edge's and the cluster relay's one place). */
export function actOn(verdict: Verdict, actions: VerdictActions): void {
  if (verdict === undefined) actions.pass(undefined);
  else if (typeof verdict === 'number') actions.refuse(deniedPage(verdict));
  else if ('token' in verdict) actions.pass(verdict);
  else actions.refuse(verdict);
}

/** Whether the rules answered later (the store, scrypt or the provider was asked). */
export function isPending(verdict: Verdict | Promise<Verdict>): verdict is Promise<Verdict> {
  return verdict instanceof Promise;
}

/**
 * Applies a tunnel's access rules before anything goes to the agent, then passes the request on
 * to the traffic rules (`passOn`): a denied request gets its 401, 403 or 429 page and is
 * recorded as any other. Credentials seen for the first time are checked off the event loop:
 * the answer then comes later, and what is returned is what to call if the visitor leaves
 * meanwhile (`settled` runs once it came). Otherwise what `passOn` returned.
 */
export function admitExchange(
  exchange: EdgeExchange,
  access: AccessCheck,
  rawHeaders: readonly string[],
  visitor: TrafficVisitor,
  verify: WebhookVerifier | undefined,
  settled: (() => void) | undefined,
): (() => void) | undefined {
  const verdict = access.signsIn
    ? access.admit({
        ip: exchange.ip,
        headers: rawHeaders,
        method: exchange.method,
        path: exchange.path,
        host: exchange.host,
        secure: exchange.secure,
      })
    : access.checkHeaders(exchange.ip, rawHeaders);
  // A visitor who may pass, as most are, needs nothing more.
  if (verdict === undefined) return passOn(exchange, rawHeaders, visitor, verify);
  let leaveTraffic: (() => void) | undefined;
  const actions: VerdictActions = {
    pass: (identity) => {
      if (identity !== undefined) exchange.identity = identity;
      leaveTraffic = passOn(exchange, rawHeaders, visitor, verify);
    },
    refuse: (page) => exchange.refuse(page),
  };
  if (!isPending(verdict)) {
    actOn(verdict, actions);
    return leaveTraffic;
  }
  let gone = false;
  void verdict.then((settledVerdict) => {
    if (gone) return;
    settled?.();
    actOn(settledVerdict, actions);
  });
  return () => {
    gone = true;
    exchange.finish();
  };
}
