import { randomInt } from 'node:crypto';
import type { Logger } from 'pino';
import { ErrorCode, Messages, SvcError, type AgentMessage } from '@svcrouter/protocol';
import { StoreConflictError, type Plan, type Store } from '../store/index.js';
import type { EdgeSession } from './edge-session.js';
import { LABEL_PATTERN, RESERVED_LABELS } from './host.js';
import type { Binding, Router } from './router.js';

/** Characters of random names: lower-case letters and digits, no lookalikes dropped (DNS is case-blind). */
const NAME_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** 10 characters of a 36-letter alphabet ≈ 51.7 bits: collisions are rare and names unguessable. */
const RANDOM_NAME_LENGTH = 10;

/** Plan limits, as configured (SPEC §8 defaults, overridable by SVC_PLANS). */
export interface PlanLimits {
  tunnels: number;
  domains: number;
  bandwidthBytes: number;
}

/** Answer of the custom-domain check: the hostname to bind, or why not. */
export type DomainDecision = { ok: true; hostname: string } | { ok: false; message: string };

export interface BinderDeps {
  store: Store;
  router: Router;
  sharedDomain: string;
  nodeId: string;
  log: Logger;
  /** Public URL of a hostname (scheme, host and the public HTTPS port). */
  publicUrl(hostname: string): string;
  limitsFor(plan: Plan): PlanLimits;
  /** Whether the account's monthly transfer quota is used up (control-plane issue). */
  isOverBandwidth?(accountId: string): boolean;
  /** Checks `SVC_DOMAIN` (+ subdomain) against the account's verified domains (custom-domain issue). */
  checkDomain?(accountId: string, domain: string, subdomain: string | undefined): Promise<DomainDecision>;
  /** Whether an account may hold `hostname` outside the shared domain (reclaim after reconnect). */
  ownsCustomHost?(accountId: string, hostname: string): Promise<boolean>;
}

/**
 * Decides which hostname a bind request gets and records it.
 *
 * Concurrency: binds of one account run one at a time (a promise chain per account), so the
 * count-then-insert of the tunnel limit cannot race: 50 parallel binds against a limit of N
 * give exactly N tunnels. Different accounts never wait for each other.
 */
export class Binder {
  private readonly accountQueues = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: BinderDeps) {}

  /** Binds a tunnel for the session or throws SvcError with the message for the agent. */
  bind(session: EdgeSession, request: Extract<AgentMessage, { type: 'bind' }>): Promise<Binding> {
    const previous = this.accountQueues.get(session.accountId) ?? Promise.resolve();
    const next = previous.then(
      () => this.bindNow(session, request),
      () => this.bindNow(session, request),
    );
    const tail = next.catch(() => undefined);
    this.accountQueues.set(session.accountId, tail);
    void tail.then(() => {
      if (this.accountQueues.get(session.accountId) === tail) this.accountQueues.delete(session.accountId);
    });
    return next;
  }

  private async bindNow(session: EdgeSession, request: Extract<AgentMessage, { type: 'bind' }>): Promise<Binding> {
    const { store, router } = this.deps;
    const account = await store.accounts.byId(session.accountId);
    if (!account) throw new SvcError(ErrorCode.TOKEN_INVALID, Messages.TOKEN_INVALID);
    if (this.deps.isOverBandwidth?.(account.id)) throw new SvcError(ErrorCode.BANDWIDTH_LIMIT, Messages.BANDWIDTH_LIMIT);

    const { hostname, pinned } = await this.chooseHostname(account.id, request);
    const holder = router.resolve(hostname);
    if (holder && holder.accountId !== account.id) throw nameTaken(hostname);

    // The same account taking its name back (a reconnect, or a second `svc` with the same
    // SVC_SUBDOMAIN) evicts the stale binding first, so it does not count against the limit.
    const limit = this.deps.limitsFor(account.plan).tunnels;
    const online = await store.tunnels.countOnline(account.id);
    const evicting = holder ? 1 : 0;
    if (online - evicting >= limit) throw new SvcError(ErrorCode.TUNNEL_LIMIT, Messages.TUNNEL_LIMIT);

    let tunnel;
    try {
      tunnel = await store.tunnels.upsertOnline({
        accountId: account.id,
        hostname,
        pinned,
        localAddr: String(request.local ?? '').slice(0, 200),
        agentVersion: session.agentVersion,
        agentIp: session.agentIp,
        nodeId: this.deps.nodeId,
      });
    } catch (error) {
      if (error instanceof StoreConflictError) throw nameTaken(hostname);
      throw error;
    }
    if (holder && holder.session !== session) {
      holder.session.release(holder.tunnelId, ErrorCode.NAME_TAKEN, `${hostname} was taken over by a newer agent of the same account`);
      router.remove(holder);
    }
    const binding: Binding = {
      tunnelId: tunnel.id,
      accountId: account.id,
      hostname,
      url: this.deps.publicUrl(hostname),
      local: String(request.local ?? ''),
      pinned,
      session,
    };
    router.add(binding);
    this.deps.log.info({ tunnelId: tunnel.id, hostname, accountId: account.id }, 'tunnel bound');
    return binding;
  }

  private async chooseHostname(
    accountId: string,
    request: Extract<AgentMessage, { type: 'bind' }>,
  ): Promise<{ hostname: string; pinned: boolean }> {
    const shared = this.deps.sharedDomain;
    if (typeof request.hostname === 'string') return this.reclaim(accountId, request.hostname, request);
    const subdomain = typeof request.subdomain === 'string' ? request.subdomain.toLowerCase() : undefined;
    if (subdomain !== undefined) validateLabel(subdomain);
    if (typeof request.domain === 'string' && request.domain !== '') {
      if (!this.deps.checkDomain) {
        throw new SvcError(ErrorCode.DOMAIN_NOT_VERIFIED, `custom domain ${request.domain} is not added and verified on this account`);
      }
      const decision = await this.deps.checkDomain(accountId, request.domain, subdomain);
      if (!decision.ok) throw new SvcError(ErrorCode.DOMAIN_NOT_VERIFIED, decision.message);
      return { hostname: decision.hostname, pinned: true };
    }
    if (subdomain !== undefined) {
      if (RESERVED_LABELS.has(subdomain)) {
        throw new SvcError(ErrorCode.NAME_RESERVED, `subdomain "${subdomain}" is reserved; choose another SVC_SUBDOMAIN`);
      }
      return { hostname: `${subdomain}.${shared}`, pinned: true };
    }
    return { hostname: await this.randomHostname(), pinned: false };
  }

  /** After a reconnect the agent asks for exactly the hostname it had. */
  private async reclaim(
    accountId: string,
    hostname: string,
    request: Extract<AgentMessage, { type: 'bind' }>,
  ): Promise<{ hostname: string; pinned: boolean }> {
    const host = hostname.toLowerCase();
    const shared = this.deps.sharedDomain;
    const pinned = request.subdomain !== undefined || (request.domain !== undefined && request.domain !== '');
    if (host.endsWith(`.${shared}`)) {
      const label = host.slice(0, -shared.length - 1);
      validateLabel(label);
      if (RESERVED_LABELS.has(label)) throw new SvcError(ErrorCode.NAME_RESERVED, `subdomain "${label}" is reserved`);
      return { hostname: host, pinned };
    }
    if (this.deps.ownsCustomHost && (await this.deps.ownsCustomHost(accountId, host))) return { hostname: host, pinned: true };
    throw new SvcError(ErrorCode.NAME_INVALID, `${host} is not a hostname this account can bind`);
  }

  private async randomHostname(): Promise<string> {
    for (let attempt = 0; attempt < 8; attempt++) {
      let label = '';
      for (let i = 0; i < RANDOM_NAME_LENGTH; i++) label += NAME_ALPHABET[randomInt(NAME_ALPHABET.length)];
      const hostname = `${label}.${this.deps.sharedDomain}`;
      if (this.deps.router.resolve(hostname)) continue;
      if (await this.deps.store.tunnels.byHostname(hostname)) continue;
      return hostname;
    }
    throw new SvcError(ErrorCode.INTERNAL, 'could not find a free random name; try again');
  }
}

function validateLabel(label: string): void {
  if (!LABEL_PATTERN.test(label)) {
    throw new SvcError(
      ErrorCode.NAME_INVALID,
      `invalid subdomain "${label}": use 1-63 letters, digits or inner hyphens (a DNS label)`,
    );
  }
}

function nameTaken(hostname: string): SvcError {
  return new SvcError(ErrorCode.NAME_TAKEN, `${hostname} is already in use by another account; choose another SVC_SUBDOMAIN`);
}
