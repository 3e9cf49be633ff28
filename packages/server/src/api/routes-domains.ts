import type { z } from 'zod';
import {
  createDnsResolver,
  domainView,
  normalizeCustomHost,
  newTxtValue,
  preflight,
  txtRecordName,
  verifyTxt,
  type EdgeTarget,
  type PreflightResult,
} from '../domains/index.js';
import { StoreConflictError, type Domain as DomainRecord, type DomainRepo, type Plan, type PlanLimits } from '../store/index.js';
import { defineRoute } from './define-route.js';
import { ApiError, notFound } from './errors.js';
import type { Route } from './router.js';
import { Domain, DomainCheck, DomainList, IdParams, NewDomainBody, type DomainRouting, type DomainVerification } from './schemas.js';

/** Overall deadline of the DNS lookups of one verification (TXT and preflight run side by side). */
export const VERIFY_TIMEOUT_MS = 5000;

/** Stable `error` codes of the domain routes, beyond the host codes of normalizeCustomHost (`host_*`, 400). */
export const DomainErrorCode = {
  /** 409: this account already has the host. */
  DOMAIN_EXISTS: 'domain_exists',
  /** 409: another account verified the host, or a domain above it. */
  DOMAIN_TAKEN: 'domain_taken',
  /** 403: the plan's domain limit is reached; the message states the limit. */
  DOMAIN_LIMIT: 'domain_limit',
} as const;

/** What the domain routes need. */
export interface DomainRouteDeps {
  store: { domains: DomainRepo };
  limitsFor(plan: Plan): PlanLimits;
  /** SVC_SHARED_DOMAIN: names at, under or above it cannot be added. */
  sharedDomain: string;
  /** SVC_DNS_SERVERS: where verification looks records up. */
  dnsServers: readonly string[];
  /** SVC_EDGE_TARGET: where hosts must point; undefined: not shown, no preflight. */
  edgeTarget?: EdgeTarget | undefined;
  /** After a delete: close the tunnels the domain covered and forget its certificates. */
  onDomainRemoved?(domain: DomainRecord): Promise<void>;
  /** Default VERIFY_TIMEOUT_MS. */
  verifyTimeoutMs?: number;
  /** Sees a domain become verified, as the API shows it (webhooks' domain.verified). */
  onVerified?(accountId: string, domain: z.input<typeof Domain>): void;
}

/** Sentence of the 403 at the plan's domain limit; always names the limit. */
export function domainLimitMessage(plan: Plan, limit: number, count: number): string {
  return (
    `Domain limit reached: the ${plan} plan allows ${limit} custom domain${limit === 1 ? '' : 's'} and this account has ${count}. ` +
    'Delete one with DELETE /v1/domains/:id, or move to a plan with more.'
  );
}

/** GET/POST /v1/domains, GET/DELETE /v1/domains/:id, POST /v1/domains/:id/verify. */
export function domainRoutes(deps: DomainRouteDeps): Route[] {
  const { domains } = deps.store;
  const timeoutMs = deps.verifyTimeoutMs ?? VERIFY_TIMEOUT_MS;
  const target = deps.edgeTarget === undefined ? null : targetView(deps.edgeTarget);
  const view = (domain: DomainRecord): z.input<typeof Domain> => ({
    ...(domainView(domain) as Omit<z.input<typeof Domain>, 'target'>),
    target,
  });
  // Adds of one account run one at a time (per node), so parallel adds cannot pass the limit together.
  const queues = new Map<string, Promise<unknown>>();
  function serialized<T>(accountId: string, task: () => Promise<T>): Promise<T> {
    const next = (queues.get(accountId) ?? Promise.resolve()).then(task, task);
    const tail = next.catch(() => undefined);
    queues.set(accountId, tail);
    void tail.then(() => queues.get(accountId) === tail && queues.delete(accountId));
    return next;
  }
  async function owned(accountId: string, id: string): Promise<DomainRecord> {
    const domain = await domains.byId(accountId, id);
    if (domain === undefined) throw notFound('domain');
    return domain;
  }

  return [
    defineRoute({
      method: 'GET',
      path: '/v1/domains',
      tag: 'domains',
      summary: 'Custom domains with their state and TXT records',
      status: 200,
      response: DomainList,
      responseDescription: 'the domains, newest first',
      async handler({ account }) {
        return { domains: (await domains.listForAccount(account.id)).map(view) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/domains',
      tag: 'domains',
      summary: 'Add a custom domain',
      description:
        'Answers with the TXT record to publish (name `_svcrouter.<host>`, value `svc-verify-…`) and where the host must point. ' +
        'The host is lower-cased and an IDN converted to punycode; IP addresses, single labels and names of the shared domain are refused (400, `error` host_empty, host_invalid, host_ip, host_single_label, host_shared_domain or host_too_long). ' +
        '409 domain_exists: already added to this account; 409 domain_taken: another account verified it. 403 domain_limit: the plan limit is reached (the message states it).',
      body: NewDomainBody,
      status: 201,
      response: Domain,
      responseDescription: 'the new domain, state pending',
      errors: [403, 409],
      async handler({ account, body }) {
        const check = normalizeCustomHost(body.host, deps.sharedDomain);
        if (!check.ok) throw new ApiError(400, check.code, check.message);
        const host = check.host;
        return serialized(account.id, async () => {
          const existing = (await domains.listForAccount(account.id)).find((d) => d.host === host);
          if (existing) {
            throw new ApiError(
              409,
              DomainErrorCode.DOMAIN_EXISTS,
              `${host} is already added to this account (id ${existing.id}); verify it with POST /v1/domains/${existing.id}/verify.`,
            );
          }
          const covering = await domains.verifiedHostCovering(host);
          if (covering !== undefined && covering.accountId !== account.id) throw taken(host);
          const limit = deps.limitsFor(account.plan).domains;
          const count = await domains.countForAccount(account.id);
          if (count >= limit) throw new ApiError(403, DomainErrorCode.DOMAIN_LIMIT, domainLimitMessage(account.plan, limit, count));
          try {
            return view(await domains.create({ accountId: account.id, host, txtValue: newTxtValue() }));
          } catch (err) {
            if (err instanceof StoreConflictError)
              throw new ApiError(409, DomainErrorCode.DOMAIN_EXISTS, `${host} is already added to this account.`);
            throw err;
          }
        });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/domains/:id',
      tag: 'domains',
      summary: 'One custom domain',
      params: IdParams,
      status: 200,
      response: Domain,
      responseDescription: 'the domain',
      async handler({ account, params }) {
        return view(await owned(account.id, params.id));
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/domains/:id',
      tag: 'domains',
      summary: 'Remove a custom domain',
      description:
        'Live tunnels on the host or names under it are closed (their agents print a line and exit), and its certificates are forgotten. ' +
        'Adding the host again gives a new TXT value to publish.',
      params: IdParams,
      status: 204,
      responseDescription: 'removed',
      async handler({ account, params }) {
        const removed = await domains.delete(account.id, params.id);
        if (removed === undefined) throw notFound('domain');
        await deps.onDomainRemoved?.(removed);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/domains/:id/verify',
      tag: 'domains',
      summary: 'Check the TXT record now',
      description:
        "Looks `_svcrouter.<host>` up through the server's resolvers (SVC_DNS_SERVERS). Answers 200 whether or not the record is right: " +
        '`state` says where the domain stands and `verification` says what was found ({ok:false, code, message} names the exact problem: ' +
        'no record, doubled zone suffix, extra whitespace, cut-off value, another value, DNS timeout or error). ' +
        "`routing` is a preflight no other tunnel service gives: whether the host's CNAME/A records already point at the edge. " +
        'It is information only and never blocks verification. 409 domain_taken: another account verified the host first.',
      params: IdParams,
      status: 200,
      response: DomainCheck,
      responseDescription: 'the domain with the verification outcome and the routing preflight',
      errors: [409],
      async handler({ account, params }) {
        let domain = await owned(account.id, params.id);
        const [txt, routing] = await Promise.all([
          domain.state === 'verified'
            ? undefined
            : verifyTxt({ host: domain.host, expected: domain.txtValue, resolver: createDnsResolver(deps.dnsServers), timeoutMs }),
          deps.edgeTarget === undefined
            ? undefined
            : preflight({ host: domain.host, target: deps.edgeTarget, resolver: createDnsResolver(deps.dnsServers), timeoutMs }),
        ]);
        let verification: z.input<typeof DomainVerification>;
        if (txt === undefined) {
          verification = { ok: true, code: null, message: `${domain.host} is verified; the TXT record is not checked again.` };
        } else if (!txt.ok) {
          verification = { ok: false, code: txt.code, message: txt.message };
        } else {
          domain = await markVerified(domain, account.id);
          deps.onVerified?.(account.id, view(domain));
          verification = {
            ok: true,
            code: null,
            message: `The TXT record at ${txtRecordName(domain.host)} matches: ${domain.host} is verified. Bind it with SVC_DOMAIN=${domain.host}.`,
          };
        }
        return { ...view(domain), verification, routing: routing === undefined ? null : routingView(domain.host, routing) };
      },
    }),
  ];

  async function markVerified(domain: DomainRecord, accountId: string): Promise<DomainRecord> {
    const covering = await domains.verifiedHostCovering(domain.host);
    if (covering !== undefined && covering.accountId !== accountId) throw taken(domain.host);
    try {
      const marked = await domains.markVerified(domain.id);
      if (marked === undefined) throw notFound('domain');
      return marked;
    } catch (err) {
      if (err instanceof StoreConflictError) throw taken(domain.host);
      throw err;
    }
  }
}

function taken(host: string): ApiError {
  return new ApiError(
    409,
    DomainErrorCode.DOMAIN_TAKEN,
    `${host} is already verified by another account; a host and the names under it belong to one account at a time.`,
  );
}

/** Where custom hosts must point, as the API shows it. */
export function targetView(target: EdgeTarget): { cname: string | null; a: string[] } {
  return { cname: target.hostname ?? null, a: [...(target.ips ?? [])] };
}

/** The preflight as the API shows it, with a sentence on what to change. */
function routingView(host: string, result: PreflightResult): z.input<typeof DomainRouting> {
  const found = { cname: result.found.cname ?? [], a: result.found.a ?? [] };
  const expected = targetView(result.expected);
  const seen = [...found.cname.map((c) => `CNAME ${c}`), ...found.a.map((a) => `A ${a}`)].join(', ') || 'no CNAME or A record';
  if (result.pointsAtEdge) return { pointsAtEdge: true, found, expected, message: `${host} points at the edge (${seen}).` };
  const wanted = [
    ...(expected.cname === null ? [] : [`a CNAME record to ${expected.cname}`]),
    ...(expected.a.length === 0 ? [] : [`A records to ${expected.a.join(', ')}`]),
  ].join(' or ');
  return {
    pointsAtEdge: false,
    found,
    expected,
    message:
      `${host} does not point at the edge yet (found: ${seen}); create ${wanted}. ` +
      'Verification does not depend on this, but visitors and certificate issuance reach the edge only once it does.',
  };
}
