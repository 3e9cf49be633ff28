import { Messages } from '@svcrouter/protocol';
import type { z } from 'zod';
import { generateToken, type GeneratedToken } from '../auth/index.js';
import type { AccountRepo, KeyRecord, KeyRepo } from '../store/index.js';
import { defineRoute } from './define-route.js';
import { ApiError, ApiErrorCode, notFound } from './errors.js';
import type { Route } from './router.js';
import { CreatedKey, IdParams, KeyList, NewKeyBody, type Key } from './schemas.js';

/** What the key routes need. */
export interface KeyRouteDeps {
  store: { keys: Pick<KeyRepo, 'insert' | 'listForAccount' | 'revoke'>; accounts: Pick<AccountRepo, 'passwordHash'> };
  /** Ends the agent sessions authenticated with a key on this node; the agent prints `message` and exits. */
  dropSessionsOfKey(keyId: string, message: string): number;
  /** Default generateToken; tests pass a fixed one. */
  newToken?: () => GeneratedToken;
  /** Receives one line per revocation (audit); never the token. */
  onRevoked?: (event: { accountId: string; keyId: string; droppedSessions: number }) => void;
  /** Sees each key created or revoked, as the API shows it (webhooks' key.created / key.revoked). */
  onKeyEvent?: (type: 'created' | 'revoked', accountId: string, key: z.input<typeof Key>) => void;
}

/** Sentence of the 409 when the last active key would be revoked: it says how to get out. */
export const LAST_KEY_MESSAGE =
  'this is the last active key of the account, which has no dashboard password; revoking it would lock the account out. ' +
  'Create another key first (POST /v1/keys), or set a password (POST /v1/me/password), then revoke this one. ' +
  'If every token is lost, the operator can print a sign-in link with `svc-server account link --email E`.';

/** Key metadata as the API shows it: never the secret, never its hash. */
export function keyView(key: KeyRecord): z.input<typeof Key> {
  return {
    id: key.id,
    description: key.description,
    prefix: key.prefix,
    createdAt: new Date(key.createdAt).toISOString(),
    lastUsedAt: key.lastUsedAt === undefined ? null : new Date(key.lastUsedAt).toISOString(),
  };
}

/** GET /v1/keys, POST /v1/keys, DELETE /v1/keys/:id. */
export function keyRoutes(deps: KeyRouteDeps): Route[] {
  const newToken = deps.newToken ?? generateToken;
  // Revocations of one account run one at a time, so two parallel calls cannot each see two
  // active keys and together revoke both. (Across several nodes this is per node.)
  const queues = new Map<string, Promise<unknown>>();
  function serialized<T>(accountId: string, task: () => Promise<T>): Promise<T> {
    const previous = queues.get(accountId) ?? Promise.resolve();
    const next = previous.then(task, task);
    const tail = next.catch(() => undefined);
    queues.set(accountId, tail);
    void tail.then(() => {
      if (queues.get(accountId) === tail) queues.delete(accountId);
    });
    return next;
  }

  return [
    defineRoute({
      method: 'GET',
      path: '/v1/keys',
      tag: 'keys',
      summary: 'Active agent tokens (metadata only)',
      status: 200,
      response: KeyList,
      responseDescription: 'the active keys, newest first',
      async handler({ account }) {
        const keys = await deps.store.keys.listForAccount(account.id);
        return { keys: keys.map(keyView) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/keys',
      tag: 'keys',
      summary: 'Create an agent token',
      description: 'The response carries the secret (token) this once; only its hash is stored.',
      body: NewKeyBody,
      status: 201,
      response: CreatedKey,
      responseDescription: 'the new key with its secret',
      async handler({ account, body }) {
        const { token, prefix, hash } = newToken();
        const key = await deps.store.keys.insert({ accountId: account.id, description: body.description ?? '', prefix, tokenHash: hash });
        deps.onKeyEvent?.('created', account.id, keyView(key));
        return { ...keyView(key), token };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/keys/:id',
      tag: 'keys',
      summary: 'Revoke an agent token',
      description:
        'The token stops authenticating at once; agents connected with it are disconnected and print `invalid or missing svcRouter token`. ' +
        'The last active key cannot be revoked (409) while the account has no password: with one, the owner can still sign in to the dashboard and create a key.',
      params: IdParams,
      status: 204,
      responseDescription: 'revoked',
      errors: [409],
      async handler({ account, params }) {
        const revoked = await serialized(account.id, async () => {
          const active = await deps.store.keys.listForAccount(account.id);
          // Another account's key, a revoked key and a made-up id all look the same.
          const key = active.find((k) => k.id === params.id);
          if (!key) throw notFound('key');
          if (active.length <= 1 && (await deps.store.accounts.passwordHash(account.id)) === undefined) {
            throw new ApiError(409, ApiErrorCode.LAST_ACTIVE_KEY, LAST_KEY_MESSAGE);
          }
          if (!(await deps.store.keys.revoke(account.id, params.id))) throw notFound('key');
          return key;
        });
        // After the store write: a dropped agent that reconnects at once is refused.
        const droppedSessions = deps.dropSessionsOfKey(params.id, Messages.TOKEN_INVALID);
        deps.onRevoked?.({ accountId: account.id, keyId: params.id, droppedSessions });
        deps.onKeyEvent?.('revoked', account.id, keyView(revoked));
      },
    }),
  ];
}
