import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { EmptyState, ErrorText, Loading, PageHeader, TableHead } from '../components/bits.js';
import { ConfirmButton } from '../components/confirm-button.js';
import { CopyButton } from '../components/copy-button.js';
import { api } from '../lib/api.js';
import { formatTime } from '../lib/format.js';
import type { CreatedKey, Key } from '../lib/types.js';
import { useAction } from '../lib/use-action.js';
import { useResource } from '../lib/use-resource.js';

/** Agent tokens: create one (its secret shown this once), list them, revoke one. */
export function TokensPage(): JSX.Element {
  const keys = useResource(() => api<{ keys: Key[] }>('GET', '/v1/keys'), []);
  const [created, setCreated] = useState<CreatedKey | undefined>(undefined);
  return (
    <section>
      <PageHeader title="Tokens" />
      <p class="muted">
        An agent signs in with a token: <code>SVC_TOKEN=svc_… svc http 3000</code>.
      </p>
      <CreateTokenForm
        onCreated={async (key) => {
          setCreated(key);
          await keys.reload();
        }}
      />
      {created && <NewSecret created={created} onDismiss={() => setCreated(undefined)} />}
      <ErrorText message={keys.error} />
      {keys.data === undefined ? (
        keys.loading && <Loading />
      ) : keys.data.keys.length === 0 ? (
        <EmptyState>No tokens yet: create one above to connect an agent.</EmptyState>
      ) : (
        <div class="table-wrap">
          <table class="cards" role="table">
            <TableHead columns={['Prefix', 'Description', 'Created', 'Last used']} withActions />
            <tbody role="rowgroup">
              {keys.data.keys.map((key) => (
                <tr key={key.id} role="row">
                  <td role="cell" data-label="Prefix">
                    <code>{key.prefix}…</code>
                  </td>
                  <td role="cell" data-label="Description">
                    {key.description || <span class="muted">(none)</span>}
                  </td>
                  <td role="cell" data-label="Created">
                    {formatTime(key.createdAt)}
                  </td>
                  <td role="cell" data-label="Last used">
                    {formatTime(key.lastUsedAt)}
                  </td>
                  <td role="cell">
                    <ConfirmButton
                      label="Revoke"
                      question={
                        <>
                          Revoke the token <code>{key.prefix}…</code>? Agents using it are disconnected at once.
                        </>
                      }
                      onConfirm={async () => {
                        await api('DELETE', `/v1/keys/${encodeURIComponent(key.id)}`);
                        if (created?.id === key.id) setCreated(undefined);
                        await keys.reload();
                      }}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function CreateTokenForm({ onCreated }: { onCreated: (key: CreatedKey) => Promise<void> }): JSX.Element {
  const action = useAction();
  const submit = async (event: SubmitEvent): Promise<void> => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const description = String(new FormData(form).get('description') ?? '').trim();
    await action.run(async () => {
      await onCreated(await api<CreatedKey>('POST', '/v1/keys', { description }));
      form.reset();
    });
  };
  return (
    <form class="card inline-form" onSubmit={(event) => void submit(event)}>
      <label>
        Description
        <input name="description" type="text" maxLength={200} placeholder="laptop, CI…" />
      </label>
      <button type="submit" class="primary" disabled={action.busy}>
        Create token
      </button>
      <ErrorText message={action.error} />
    </form>
  );
}

/** The secret of the token just created; the server never returns it again. */
function NewSecret({ created, onDismiss }: { created: CreatedKey; onDismiss: () => void }): JSX.Element {
  return (
    <div class="card secret" role="region" aria-label="New token">
      <p>
        <strong>Your new token</strong> ({created.description || 'no description'}). Copy it now: you won't see this again.
      </p>
      <div class="secret-row">
        <code class="token" data-testid="new-token">
          {created.token}
        </code>
        <CopyButton text={created.token} what="token" />
      </div>
      <button type="button" class="small" onClick={onDismiss}>
        Done
      </button>
    </div>
  );
}
