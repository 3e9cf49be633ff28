import type { Logger } from 'pino';
import type { OidcSessionsRepo } from '../store/index.js';
import { keyRefreshMs, planKeys, publishedKeys, signingKey } from './key-schedule.js';
import { ensureActiveKey, openSigningKey, type OpenedKey, type Sealer } from './signing-keys.js';

export interface KeyRingOptions {
  repo: OidcSessionsRepo;
  sealer: Sealer;
  /** The wait between a rotation and its first token (KEY_ACTIVATION_DELAY_MS unless configured). */
  activationDelayMs: number;
  log: Logger;
  now?: () => number;
}

/**
 * This node's copy of the signing keys in the store, re-read every keyRefreshMs (well inside the
 * activation delay, so a rotated key is published here before any node signs with it). Keys past
 * their retention are deleted from the store by whichever node sees them first.
 */
export class KeyRing {
  private keys: OpenedKey[] = [];
  /** The signing key, good until `switchAt` (the next key's activeAt): the request path does no more than compare. */
  private current: { key: OpenedKey; switchAt: number } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(private readonly options: KeyRingOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Loads the keys (storing a first one when none is active); then keeps them fresh. */
  async start(): Promise<void> {
    await ensureActiveKey(this.options.repo, this.options.sealer, this.now());
    await this.refresh();
    this.timer = setInterval(() => {
      this.refresh().catch((err: unknown) => this.options.log.warn({ err }, 'reading the signing keys failed'));
    }, keyRefreshMs(this.options.activationDelayMs));
    this.timer.unref();
  }

  /** Re-reads the store: opens new keys, forgets dropped ones, deletes retired rows. */
  async refresh(): Promise<void> {
    const stored = await this.options.repo.signingKeys();
    const known = new Map(this.keys.map((key) => [key.kid, key]));
    const now = this.now();
    const opened: OpenedKey[] = [];
    for (const plan of planKeys(stored, now)) {
      if (plan.state === 'retired') {
        await this.options.repo.deleteSigningKey(plan.key.kid);
        this.options.log.info({ kid: plan.key.kid }, 'retired signing key deleted');
        continue;
      }
      opened.push(known.get(plan.key.kid) ?? openSigningKey(this.options.sealer, plan.key));
    }
    if (opened.length > 0) {
      this.keys = opened;
      this.current = undefined;
    }
  }

  /** The key to sign a token with now. */
  signingKey(now: number): OpenedKey {
    const current = this.current;
    if (current !== undefined && now < current.switchAt) return current.key;
    const key = signingKey(this.keys, now);
    if (key === undefined) throw new Error('no signing key loaded');
    let switchAt = Infinity;
    for (const other of this.keys) if (other.activeAt > now && other.activeAt < switchAt) switchAt = other.activeAt;
    this.current = { key, switchAt };
    return key;
  }

  /** The JSON of GET /.well-known/jwks.json: every key not retired at `now`. */
  jwks(now: number): string {
    return JSON.stringify({ keys: publishedKeys(this.keys, now).map((key) => key.publicJwk) });
  }

  close(): void {
    clearInterval(this.timer);
  }
}
