import type { Identity, Verdict } from '../policy/index.js';
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
