import * as client from 'openid-client';
import type { OidcProviderConfig } from '../config.js';

/** Seconds a request to a provider (discovery, token exchange) may take. */
const PROVIDER_TIMEOUT_S = 10;

/**
 * The configured OpenID Connect providers, each discovered (`<issuer>/.well-known/openid-
 * configuration`) on first use and kept; a failed discovery is tried again on the next sign-in,
 * so a provider that was down at boot costs nothing once it is back.
 */
export class Providers {
  private readonly byName = new Map<string, OidcProviderConfig>();
  private readonly discovered = new Map<string, Promise<client.Configuration>>();
  readonly names: readonly string[];

  constructor(configs: readonly OidcProviderConfig[]) {
    for (const config of configs) this.byName.set(config.name, config);
    this.names = Object.freeze(configs.map((config) => config.name));
  }

  /** The openid-client configuration of a provider (discovered once), or a rejection saying why not. */
  configuration(name: string): Promise<client.Configuration> {
    let found = this.discovered.get(name);
    if (found === undefined) {
      const provider = this.byName.get(name);
      if (provider === undefined) return Promise.reject(new Error(`unknown provider ${name}`));
      const issuer = new URL(provider.issuer);
      found = client.discovery(issuer, provider.clientId, undefined, client.ClientSecretBasic(provider.clientSecret), {
        timeout: PROVIDER_TIMEOUT_S,
        // A plain-http issuer is the operator's choice (a provider on loopback or a private network).
        ...(issuer.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : {}),
      });
      found.catch(() => this.discovered.delete(name));
      this.discovered.set(name, found);
    }
    return found;
  }
}
