import { randomInt } from 'node:crypto';
import type { Logger } from 'pino';
import { BindMessages, ErrorCode, Messages, SvcError, hasRules, policyProblem, type AgentMessage } from '@svcrouter/protocol';
import { routeListOf, routeTableOf } from './route-labels.js';
import {
  PolicyConflictError,
  PoolConflictError,
  StoreConflictError,
  type Account,
  type Plan,
  type PlanLimits,
  type Store,
  type Tunnel,
} from '../store/index.js';
import { compilePolicy, compileTraffic, type RateLimiter, type SignIn } from '../policy/index.js';
import { checkHolder, nameTaken } from './holder-checks.js';
import { policySignature } from './policy-signature.js';
import { storedPolicy } from './stored-policy.js';
import { NameGraces, type NameGrace } from './name-graces.js';
import { newBinding, type EdgeSession, type UnbindReason } from './edge-session.js';
import { isDnsLabel } from '../hostname/index.js';
import { RESERVED_LABELS } from './host.js';
import type { Binding, Router } from './router.js';
import { tlsUrl } from '../hostname/index.js';

/** Characters of random names: lower-case letters and digits, no lookalikes dropped (DNS is case-blind). */
const NAME_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** 10 characters of a 36-letter alphabet ≈ 51.7 bits: collisions are rare and names unguessable. */
const RANDOM_NAME_LENGTH = 10;

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
  /** How long a name stays its account's after the agent's connection is lost (see NameGrace); 0 or absent: not at all. */
  nameGraceMs?: number;
  /**
   * Several nodes share the store: the tunnel limit is checked and the tunnel recorded under the
   * store's lock per account (claimOnline), so binds on different nodes never pass it together.
   */
  sharedStore?: boolean;
  /** Whether another node still holds this tunnel (the same agent's other session): its row then stays online. */
  heldElsewhere?(hostname: string, tunnelId: string): Promise<boolean>;
  /**
   * Sees a tunnel come online, and go offline once it is really gone: at a clean exit, or when
   * the name's grace period ended without a reconnect (a blip reports nothing either way).
   */
  onTunnelChange?(change: TunnelChange): void;
  /** TCP tunnels (edge/tcp/): picks and claims a bind's port; absent: `proto: 'tcp'` binds are refused. */
  tcp?: TcpChooser;
  /** Single sign-on (SVC_OIDC_PROVIDERS); absent: a bind naming a provider is refused. */
  signIn?: SignIn;
  /** Counts the requests of tunnels with a rate limit: this node's memory, or a count a cluster shares. */
  rateLimiter?: RateLimiter;
  /** Seals a webhook signing secret before the policy is stored; absent: the secret is not stored at all. */
  sealSecret?(plain: string): string;
}

/** What the binder asks of TCP tunnels: the port's name for a bind, and giving it up when the bind fails after. */
export interface TcpChooser {
  choose(accountId: string, request: Extract<AgentMessage, { type: 'bind' }>): Promise<{ hostname: string; pinned: boolean }>;
  failed(hostname: string, accountId: string): void;
}

/** A tunnel coming online (with its stored row) or going offline (webhooks' tunnel.online / tunnel.offline). */
export type TunnelChange = { type: 'online'; binding: Binding; tunnel: Tunnel } | { type: 'offline'; binding: Binding };

/** Longest agent group id kept; a longer one is cut (it only has to tell one agent's sessions apart). */
const MAX_GROUP_LENGTH = 64;

/**
 * Decides which hostname a bind request gets, and records bindings coming and going in the
 * store. The router (in memory) is the truth for this node; the store follows it.
 *
 * Concurrency:
 * - Binds of one account run one at a time (a promise chain per account), so the
 *   count-then-insert of the tunnel limit cannot race: 50 parallel binds against a limit of
 *   N give exactly N tunnels. Different accounts never wait for each other's binds.
 * - Every store write for a hostname (a bind's upsert, an unbind's offline/delete) runs under
 *   a per-hostname lock, in the order the router changed. An unbind's write re-checks the
 *   router when it runs and is skipped when a newer binding owns the row by then, so a late
 *   "offline" never overwrites a fresh "online".
 * - A bind first waits for its account's pending unbind writes, so the online count it checks
 *   includes every tunnel this node has already released.
 * Lock order is account → hostname; unbind writes take only the hostname lock, so no cycle.
 */
export class Binder {
  private readonly accountQueues = new Map<string, Promise<unknown>>();
  private readonly hostLocks = new Map<string, Promise<unknown>>();
  /** Unbind writes not yet in the store, per account. */
  private readonly pendingWrites = new Map<string, Set<Promise<void>>>();
  /**
   * Names whose agents lost their connection, held for their accounts while they reconnect:
   * without it another account could bind a pinned name in the moment between the drop and the
   * reconnect, and serve its own pages under it. A clean exit gives the name up at once. In
   * memory on this node, as the router is.
   */
  private readonly graces = new NameGraces();

  constructor(private readonly deps: BinderDeps) {}

  /** Binds a tunnel for the session or throws SvcError with the message for the agent. */
  bind(session: EdgeSession, request: Extract<AgentMessage, { type: 'bind' }>): Promise<Binding> {
    return serialize(this.accountQueues, session.accountId, () => this.bindNow(session, request));
  }

  /**
   * Takes a binding off the router at once (visitors see the offline page from now on, or wait
   * for a reconnect when the connection was lost) and records it in the store: deleted after a
   * clean exit of a random name, offline otherwise (pinned names, sessions the edge ended and
   * lost connections stay listed so the owner can see and reclaim them).
   */
  unbind(binding: Binding, reason: UnbindReason): void {
    const { router, store, log } = this.deps;
    const clean = reason === 'goodbye';
    const removed = router.remove(binding);
    // A pool member leaving is news of its own tunnel; the name waits for a reconnect only when it was the last.
    const last = binding.pool === undefined || binding.pool.members.length === 0;
    if (removed && reason === 'lost' && last) this.holdName(binding);
    else if (removed) this.reportOffline(binding);
    const write = serialize(this.hostLocks, binding.hostname, async () => {
      // Rows are reused per (account, hostname): a live binding with this id is newer and owns it.
      if (router.byTunnelId(binding.tunnelId)) return;
      // A lost session of an agent still served through another node leaves the tunnel online.
      if (!clean && (await this.deps.heldElsewhere?.(binding.hostname, binding.tunnelId))) {
        const grace = this.graces.get(binding.hostname);
        if (grace?.tunnelId === binding.tunnelId) grace.elsewhere = true;
        return;
      }
      // A member leaving a pool that carries on is gone for good: the name stays listed through the others.
      if (clean && (!binding.pinned || (binding.pool?.members.length ?? 0) > 0))
        await store.tunnels.delete(binding.accountId, binding.tunnelId);
      else await store.tunnels.setOffline(binding.tunnelId);
    }).catch((error: unknown) => log.error({ err: error, tunnelId: binding.tunnelId }, 'could not record tunnel offline'));
    let pending = this.pendingWrites.get(binding.accountId);
    if (!pending) this.pendingWrites.set(binding.accountId, (pending = new Set()));
    const set = pending;
    set.add(write);
    void write.then(() => {
      set.delete(write);
      if (set.size === 0 && this.pendingWrites.get(binding.accountId) === set) this.pendingWrites.delete(binding.accountId);
    });
  }

  /** The account a name is held for while its agent reconnects, and until when (Date.now()); undefined when none. */
  graceOf(hostname: string): { accountId: string; until: number } | undefined {
    const grace = this.graces.get(hostname);
    return grace && grace.until > Date.now() ? grace : undefined;
  }

  /**
   * Ends the grace of the name a tunnel held while its agent was away (the tunnel deleted, or
   * beyond a lowered plan): nothing can bind it back. Returns the lost binding, or undefined.
   */
  endGrace(tunnelId: string): Binding | undefined {
    for (const [hostname, grace] of this.graces) {
      if (grace.tunnelId !== tunnelId) continue;
      this.graces.delete(hostname);
      this.reportOffline(grace.binding);
      return grace.binding;
    }
    return undefined;
  }

  /** The lost bindings whose names are in their grace period on this node (agents away, maybe reconnecting). */
  graceBindings(): Binding[] {
    return this.graces.lostBindings();
  }

  /** A binding the API deleted while live: it is gone for good, reported offline now. */
  released(binding: Binding): void {
    this.reportOffline(binding);
  }

  /**
   * Ends the grace of every name whose agent was away when its key was revoked: the agent cannot
   * sign in again with it, so the names are free and reported offline now. Returns the bindings.
   */
  endGracesOfKey(keyId: string): Binding[] {
    const ended: Binding[] = [];
    for (const [hostname, grace] of this.graces) {
      if (grace.keyId === undefined || grace.keyId !== keyId) continue;
      this.graces.delete(hostname);
      ended.push(grace.binding);
      this.reportOffline(grace.binding);
    }
    return ended;
  }

  /** Resolves once every store write started so far has finished (graceful shutdown). */
  async idle(): Promise<void> {
    const writes = [...this.pendingWrites.values()].flatMap((set) => [...set]);
    await Promise.all([...writes, ...this.accountQueues.values()].map((p) => p.catch(() => undefined)));
  }

  private async bindNow(session: EdgeSession, request: Extract<AgentMessage, { type: 'bind' }>): Promise<Binding> {
    const { store } = this.deps;
    // The agent is not trusted: its rules are checked here as the agent checked them.
    if (request.policy !== undefined) {
      const problem = policyProblem(request.policy);
      if (problem !== undefined) throw new SvcError(ErrorCode.POLICY_INVALID, BindMessages.policyInvalid(problem));
      const provider = request.policy.oidc;
      if (provider !== undefined && (this.deps.signIn === undefined || !this.deps.signIn.providers.includes(provider))) {
        throw new SvcError(ErrorCode.POLICY_INVALID, BindMessages.oidcUnknown(provider, this.deps.signIn?.providers ?? []));
      }
    }
    // Routes (checked here too) only label records and pages: the agent picks the target.
    routeTableOf(request.routes);
    const account = await store.accounts.byId(session.accountId);
    if (!account) throw new SvcError(ErrorCode.TOKEN_INVALID, Messages.TOKEN_INVALID);
    if (this.deps.isOverBandwidth?.(account.id)) throw new SvcError(ErrorCode.BANDWIDTH_LIMIT, Messages.BANDWIDTH_LIMIT);
    if (request.proto !== undefined && request.proto !== 'tcp' && request.proto !== 'tls') {
      throw new SvcError(ErrorCode.PROTOCOL, `unknown tunnel proto "${String(request.proto).slice(0, 20)}": expected tcp, tls or none`);
    }
    if (request.proto === 'tls' && hasRules(request.policy)) throw new SvcError(ErrorCode.POLICY_INVALID, BindMessages.tlsNoAccess);
    const tcp = request.proto === 'tcp';
    const { hostname, pinned } = tcp ? await this.chooseTcp(account.id, request) : await this.chooseHostname(account.id, request);
    const pending = this.pendingWrites.get(account.id);
    if (pending) await Promise.all(pending);
    const bound = serialize(this.hostLocks, hostname, () => this.claim(session, account, hostname, pinned, request));
    // A TCP port is claimed and listened on before the limit check: a refused bind gives it up.
    if (tcp) bound.catch(() => this.deps.tcp?.failed(hostname, account.id));
    return bound;
  }

  private chooseTcp(accountId: string, request: Extract<AgentMessage, { type: 'bind' }>): Promise<{ hostname: string; pinned: boolean }> {
    if (!this.deps.tcp)
      throw new SvcError(ErrorCode.TCP_PORT_UNAVAILABLE, `${Messages.TCP_PORT_UNAVAILABLE}: TCP tunnels are off on this edge`);
    return this.deps.tcp.choose(accountId, request);
  }

  /** Checks the holder and the limit, records the tunnel online and routes it. Runs under the hostname lock. */
  private async claim(
    session: EdgeSession,
    account: Account,
    hostname: string,
    pinned: boolean,
    request: Extract<AgentMessage, { type: 'bind' }>,
  ): Promise<Binding> {
    const { store, router } = this.deps;
    const holder = router.resolve(hostname);
    const pooled = request.pool === true;
    const group = typeof request.group === 'string' && request.group !== '' ? request.group.slice(0, MAX_GROUP_LENGTH) : undefined;
    const policy = hasRules(request.policy) ? request.policy : undefined;
    const signature = pooled ? policySignature(policy) : '';
    if (holder) checkHolder(holder, hostname, { accountId: account.id, session, pooled, group, policy, signature });
    const grace = this.graces.get(hostname);
    if (grace && grace.until > Date.now() && grace.accountId !== account.id) throw nameTaken(hostname);
    // The same account back within the grace period (or replacing its own binding) is no news.
    const returning = (grace !== undefined && grace.until > Date.now()) || (holder !== undefined && !pooled);

    // The same account taking its name back (a reconnect, or a second `svc` with the same
    // SVC_SUBDOMAIN) evicts the stale binding, so it does not count against the limit.
    const routeList = routeListOf(request.routes);
    const routesJson = routeList === undefined ? undefined : JSON.stringify(routeList);
    // A tunnel whose agent is away keeps its slot with its name (plan-watch.ts counts it too).
    const away = this.graces.awaySlots(account.id, hostname);
    const limit = this.deps.limitsFor(account.plan).tunnels - away;
    const limitReached = () =>
      new SvcError(
        ErrorCode.TUNNEL_LIMIT,
        away > 0 ? BindMessages.tunnelLimitAway(away, Math.ceil((this.deps.nameGraceMs ?? 0) / 1000)) : Messages.TUNNEL_LIMIT,
      );
    const input = {
      accountId: account.id,
      hostname,
      pinned,
      localAddr: String(request.local ?? '').slice(0, 200),
      agentVersion: session.agentVersion,
      agentIp: session.agentIp,
      nodeId: this.deps.nodeId,
      ...(policy !== undefined ? { policy: storedPolicy(policy, this.deps.sealSecret) } : {}),
      ...(pooled ? { pool: true } : {}),
      proto: request.proto ?? ('http' as const),
      ...(routesJson !== undefined ? { routes: routesJson } : {}),
    };
    let tunnel;
    try {
      if (this.deps.sharedStore) {
        // The name's own row is reused, so it never counts against itself: one tunnel held on
        // two nodes by one agent counts once, and a takeover replaces rather than adds.
        tunnel = await store.tunnels.claimOnline(input, limit);
        if (!tunnel) throw limitReached();
      } else {
        const online = await store.tunnels.countOnline(account.id);
        const evicting = holder && !pooled ? 1 : 0;
        if (online - evicting >= limit) throw limitReached();
        tunnel = await store.tunnels.upsertOnline(input);
      }
    } catch (error) {
      if (error instanceof PoolConflictError)
        throw new SvcError(ErrorCode.NAME_TAKEN, BindMessages.poolMismatch(hostname, error.heldAsPool));
      if (error instanceof PolicyConflictError) throw new SvcError(ErrorCode.POLICY_INVALID, BindMessages.policyRequired(hostname));
      if (error instanceof StoreConflictError) throw nameTaken(hostname);
      throw error;
    }
    const traffic = this.deps.rateLimiter && compileTraffic(policy, { limiter: this.deps.rateLimiter });
    const binding = newBinding({
      tunnelId: tunnel.id,
      accountId: account.id,
      hostname,
      url:
        request.proto === 'tcp'
          ? `tcp://${hostname}`
          : request.proto === 'tls'
            ? tlsUrl(this.deps.publicUrl(hostname))
            : this.deps.publicUrl(hostname),
      // Shown on the 502 page of every request that cannot reach it: the agent's word, so capped.
      local: String(request.local ?? '').slice(0, 200),
      pinned,
      session,
      boundAt: Date.now(),
      group,
      proto: request.proto === 'tls' ? 'tls' : undefined,
      routes: routesJson !== undefined ? routeTableOf(routeList)! : undefined,
      routesJson,
      access: compilePolicy(policy, this.deps.signIn, account.id),
      traffic: traffic || undefined,
    });

    // From here to the end is synchronous: the router, the session and the store agree.
    if (session.isClosed) {
      // The agent left while the row was being written: record it offline (the write queues
      // behind this lock and is skipped if a holder of the same account still owns the row).
      this.unbind(binding, 'lost');
      throw new SvcError(ErrorCode.SESSION_CLOSED, BindMessages.sessionClosed);
    }
    const current = router.resolve(hostname);
    if (pooled) {
      const pool = current?.pool ?? { members: [], next: 0, signature };
      binding.pool = pool;
      binding.inFlight = 0;
      // One lock for the whole pool: salted hashes cannot be compared, so a member's users are
      // checked against the passwords of the member that started the pool.
      if (pool.members.length > 0) binding.access = pool.members[0]!.access;
    } else if (current && current.session !== session) {
      // Superseded, not failed: the older agent exits 0, so a supervisor restarting it "on
      // failure" does not start a tug of war over the name.
      current.session.release(current.tunnelId, ErrorCode.TUNNEL_RELEASED, BindMessages.takenOver(hostname));
      router.remove(current);
    }
    session.bindings.set(binding.tunnelId, binding);
    router.add(binding);
    this.graces.delete(hostname);
    this.deps.log.info({ tunnelId: tunnel.id, hostname, accountId: account.id }, 'tunnel bound');
    if (!returning) this.deps.onTunnelChange?.({ type: 'online', binding, tunnel });
    return binding;
  }

  /** Keeps a name whose agent dropped for its account for the grace period (see `graces`). */
  private holdName(binding: Binding): void {
    const graceMs = this.deps.nameGraceMs ?? 0;
    if (graceMs <= 0) return this.reportOffline(binding);
    const grace: NameGrace = {
      accountId: binding.accountId,
      until: Date.now() + graceMs,
      tunnelId: binding.tunnelId,
      keyId: binding.session.keyId,
      binding,
    };
    this.graces.set(binding.hostname, grace);
    setTimeout(() => {
      if (this.graces.get(binding.hostname) !== grace) return;
      this.graces.delete(binding.hostname);
      this.reportOffline(binding);
    }, graceMs).unref();
  }

  /** Reports the tunnel gone unless it is bound again here, or its agent is still served through another node. */
  private reportOffline(binding: Binding): void {
    const report = this.deps.onTunnelChange;
    if (!report || this.deps.router.byTunnelId(binding.tunnelId)) return;
    void Promise.resolve(this.deps.heldElsewhere?.(binding.hostname, binding.tunnelId) ?? false).then(
      (elsewhere) => {
        if (!elsewhere && !this.deps.router.byTunnelId(binding.tunnelId)) report({ type: 'offline', binding });
      },
      () => report({ type: 'offline', binding }),
    );
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
        throw new SvcError(ErrorCode.DOMAIN_NOT_VERIFIED, BindMessages.domainNotVerified(request.domain));
      }
      const decision = await this.deps.checkDomain(accountId, request.domain, subdomain);
      if (!decision.ok) throw new SvcError(ErrorCode.DOMAIN_NOT_VERIFIED, decision.message);
      return { hostname: decision.hostname, pinned: true };
    }
    if (subdomain !== undefined) {
      if (RESERVED_LABELS.has(subdomain)) {
        throw new SvcError(ErrorCode.NAME_RESERVED, BindMessages.subdomainReserved(subdomain));
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
      if (RESERVED_LABELS.has(label)) throw new SvcError(ErrorCode.NAME_RESERVED, BindMessages.nameReserved(label));
      return { hostname: host, pinned };
    }
    if (this.deps.ownsCustomHost && (await this.deps.ownsCustomHost(accountId, host))) return { hostname: host, pinned: true };
    throw new SvcError(ErrorCode.NAME_INVALID, BindMessages.notBindable(host));
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
    throw new SvcError(ErrorCode.INTERNAL, BindMessages.noFreeName);
  }
}

function validateLabel(label: string): void {
  if (!isDnsLabel(label)) {
    throw new SvcError(ErrorCode.NAME_INVALID, BindMessages.subdomainInvalid(label));
  }
}

/**
 * Runs `task` after every task queued before it under `key` has settled, and drops the key
 * once its chain is idle. A failed task does not stop the ones after it.
 */
function serialize<T>(chains: Map<string, Promise<unknown>>, key: string, task: () => Promise<T>): Promise<T> {
  const previous = chains.get(key) ?? Promise.resolve();
  const next = previous.then(task, task);
  const tail = next.catch(() => undefined);
  chains.set(key, tail);
  void tail.then(() => {
    if (chains.get(key) === tail) chains.delete(key);
  });
  return next;
}
