import { X509Certificate } from 'node:crypto';
import * as acme from 'acme-client';
import type { AcmeAccountRepo } from '../store/index.js';
import type { PemCertificate } from './dev-ca.js';

/** A certificate fresh from the CA: full chain, its key, and the leaf's notAfter. */
export interface OrderedCertificate extends PemCertificate {
  expiresAt: number;
}

/** How long acme-client waits between status polls, and how often; its defaults are 5-30 s, 10 attempts. */
export interface AcmePolling {
  attempts?: number;
  minMs?: number;
  maxMs?: number;
}

/** What an orderer needs. */
export interface AcmeOrdererOptions {
  directoryUrl: string;
  email?: string | undefined;
  /** Where the account key lives, one per directory URL. */
  accounts: AcmeAccountRepo;
  /** Publishes (string) and withdraws (undefined) an HTTP-01 key authorization by token; the CA is asked to validate once it settles. */
  publish: (token: string, keyAuthorization: string | undefined) => void | Promise<void>;
  polling?: AcmePolling;
}

/** Places one ACME order for a hostname, answering HTTP-01, and returns the certificate. */
export type AcmeOrderer = (hostname: string) => Promise<OrderedCertificate>;

/**
 * Creates the function that orders certificates. The account key is read from
 * the store, or created and stored on the first order (putIfAbsent, so nodes
 * starting together agree on one key); the account URL is stored once the CA
 * has returned it, so later starts skip registration.
 */
export function createAcmeOrderer(options: AcmeOrdererOptions): AcmeOrderer {
  const { directoryUrl, accounts } = options;
  let client: Promise<acme.Client> | undefined;

  async function newClient(): Promise<acme.Client> {
    let account = await accounts.get(directoryUrl);
    if (account === undefined) {
      const keyPem = (await acme.crypto.createPrivateEcdsaKey()).toString();
      account = await accounts.putIfAbsent({ id: directoryUrl, keyPem });
    }
    const polling = options.polling ?? {};
    return new acme.Client({
      directoryUrl,
      accountKey: account.keyPem,
      ...(account.url === undefined ? {} : { accountUrl: account.url }),
      ...(polling.attempts === undefined ? {} : { backoffAttempts: polling.attempts }),
      ...(polling.minMs === undefined ? {} : { backoffMin: polling.minMs }),
      ...(polling.maxMs === undefined ? {} : { backoffMax: polling.maxMs }),
    });
  }

  return async (hostname) => {
    // One client for all orders; a failure to build it (store down) is retried next time.
    client ??= newClient().catch((err: unknown) => {
      client = undefined;
      throw err;
    });
    const acmeClient = await client;
    const [key, csr] = await acme.crypto.createCsr(
      { commonName: hostname, altNames: [hostname] },
      await acme.crypto.createPrivateEcdsaKey(),
    );
    const hadUrl = hasAccountUrl(acmeClient);
    const certPem = await acmeClient.auto({
      csr,
      ...(options.email === undefined ? {} : { email: options.email }),
      termsOfServiceAgreed: true,
      challengePriority: ['http-01'],
      // acme-client's own pre-check resolves through the system DNS and fetches
      // from this machine; the CA's validation is the one that counts.
      skipChallengeVerification: true,
      challengeCreateFn: async (_authz, challenge, keyAuthorization) => await options.publish(challenge.token, keyAuthorization),
      challengeRemoveFn: async (_authz, challenge) => await options.publish(challenge.token, undefined),
    });
    if (!hadUrl) await accounts.setUrl(directoryUrl, acmeClient.getAccountUrl());
    const expiresAt = Date.parse(new X509Certificate(certPem).validTo);
    if (Number.isNaN(expiresAt)) throw new Error('the CA returned a certificate with an unreadable notAfter');
    return { certPem, keyPem: key.toString(), expiresAt };
  };
}

function hasAccountUrl(client: acme.Client): boolean {
  try {
    client.getAccountUrl();
    return true;
  } catch {
    return false;
  }
}

/** A short, single-line reason for a failed order, fit for domains.cert_error and the API. */
export function describeOrderError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const line = message.replace(/\s+/g, ' ').trim() || 'unknown error';
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}
