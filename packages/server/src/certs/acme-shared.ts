import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { AcmeSharedRepo, StoredCertificate } from '../store/index.js';

// The part of the issuer that lets several edge nodes on one database order certificates
// together: HTTP-01 answers any node can give, and one order per hostname at a time.

/** A shared answer is given this long at most: an order that never ended (its node died) stops being answered. */
export const SHARED_CHALLENGE_TTL_MS = 10 * 60 * 1000;
/** A node's lease on ordering a hostname: longer than an order takes (ACME_POLLING waits about a minute and a half). */
export const ORDER_LEASE_MS = 5 * 60 * 1000;
/** How often a node waiting on another node's order looks for its certificate. */
export const ORDER_WAIT_POLL_MS = 250;

/** What the issuer is given on a node of a cluster. */
export interface SharedOrdering {
  repo: AcmeSharedRepo;
  /** This node's id: the lease owner, so a restarted node takes back a lease its previous run held. */
  nodeId: string;
  /** Default ORDER_WAIT_POLL_MS. */
  waitPollMs?: number;
}

/** Keeps answers in memory and, with `shared`, in the store too, so any node can give them. */
export class ChallengeAnswers {
  readonly #memory = new Map<string, string>();

  constructor(
    private readonly shared: SharedOrdering | undefined,
    private readonly now: () => number,
    private readonly logger: Logger | undefined,
  ) {}

  /** Publishes (string) or withdraws (undefined); a shared answer is stored before this settles. */
  async publish(token: string, keyAuthorization: string | undefined): Promise<void> {
    if (keyAuthorization === undefined) {
      this.#memory.delete(token);
      // An answer left behind expires by itself; the order's outcome does not depend on it.
      await this.shared?.repo.deleteChallenge(token).catch((err: unknown) => this.logger?.warn({ err }, 'shared acme answer not removed'));
      return;
    }
    this.#memory.set(token, keyAuthorization);
    if (this.shared === undefined) return;
    const now = this.now();
    await this.shared.repo.deleteExpiredChallenges(now);
    await this.shared.repo.putChallenge({ token, keyAuthorization, expiresAt: now + SHARED_CHALLENGE_TTL_MS });
  }

  /** This node's answer at once, else (shared) the store's; undefined when none, or the store fails. */
  answer(token: string): string | undefined | Promise<string | undefined> {
    const held = this.#memory.get(token);
    if (held !== undefined || this.shared === undefined) return held;
    return this.shared.repo.challenge(token, this.now()).catch((err: unknown) => {
      this.logger?.warn({ err }, 'shared acme answer unreadable');
      return undefined;
    });
  }
}

/**
 * Waits while another node holds the lease on ordering `host`: the certificate it stores
 * (one that is not `previous`), or undefined once the lease is gone without one (that order
 * failed; the next handshake or renewal pass tries again) or `stopped()` says so.
 */
export async function awaitOtherNode(
  shared: SharedOrdering,
  certificates: { get(host: string): Promise<StoredCertificate | undefined> },
  host: string,
  previous: StoredCertificate | undefined,
  now: () => number,
  stopped: () => boolean,
): Promise<StoredCertificate | undefined> {
  const fresh = (cert: StoredCertificate | undefined): cert is StoredCertificate =>
    cert !== undefined && cert.expiresAt > now() && (previous === undefined || cert.issuedAt !== previous.issuedAt);
  for (;;) {
    const holder = await shared.repo.orderHolder(host, now());
    const cert = await certificates.get(host);
    if (fresh(cert)) return cert;
    if (holder === undefined || stopped()) return undefined;
    await delay(shared.waitPollMs ?? ORDER_WAIT_POLL_MS);
  }
}
