import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { EmptyState, ErrorText, Loading, PageHeader, TableHead } from '../components/bits.js';
import { ConfirmButton } from '../components/confirm-button.js';
import { CopyButton } from '../components/copy-button.js';
import { api } from '../lib/api.js';
import { formatTime } from '../lib/format.js';
import type { CreatedWebhook, Webhook, WebhookDelivery, WebhookEventType } from '../lib/types.js';
import { useAction } from '../lib/use-action.js';
import { useResource } from '../lib/use-resource.js';

/** How often the lists are read again while the page is open. */
const POLL_MS = 3000;

/** Every event type, as the create form offers them. */
const EVENT_TYPES: readonly WebhookEventType[] = [
  'tunnel.online',
  'tunnel.offline',
  'domain.verified',
  'certificate.issued',
  'certificate.failed',
  'usage.threshold',
  'key.created',
  'key.revoked',
];

/** Webhooks: add one (its signing secret shown this once), list them with their last delivery, see deliveries, resend, delete. */
export function WebhooksPage(): JSX.Element {
  // Polled: a delivery's state changes on the server's schedule, not on a click here.
  const hooks = useResource(() => api<{ webhooks: Webhook[] }>('GET', '/v1/webhooks'), [], POLL_MS);
  const [created, setCreated] = useState<CreatedWebhook | undefined>(undefined);
  const [open, setOpen] = useState<string | undefined>(undefined);
  return (
    <section>
      <PageHeader title="Webhooks" />
      <p class="muted">Signed POSTs to your URL when tunnels, domains, certificates, usage or tokens change.</p>
      <CreateWebhookForm
        onCreated={async (hook) => {
          setCreated(hook);
          await hooks.reload();
        }}
      />
      {created && <NewSecret created={created} onDismiss={() => setCreated(undefined)} />}
      <ErrorText message={hooks.error} />
      {hooks.data === undefined ? (
        hooks.loading && <Loading />
      ) : hooks.data.webhooks.length === 0 ? (
        <EmptyState>No webhooks yet: add a receiver URL above.</EmptyState>
      ) : (
        <div class="table-wrap">
          <table class="cards" role="table">
            <TableHead columns={['URL', 'Events', 'Created', 'Last delivery']} withActions />
            <tbody role="rowgroup">
              {hooks.data.webhooks.map((hook) => (
                <tr key={hook.id} role="row" data-webhook={hook.id}>
                  <td role="cell" data-label="URL">
                    <code>{hook.url}</code>
                  </td>
                  <td role="cell" data-label="Events">
                    {hook.events.length === 0 ? 'all' : hook.events.join(', ')}
                  </td>
                  <td role="cell" data-label="Created">
                    {formatTime(hook.createdAt)}
                  </td>
                  <td role="cell" data-label="Last delivery" data-testid="last-delivery">
                    {hook.lastDelivery ? `${hook.lastDelivery.eventType}: ${hook.lastDelivery.state}` : <span class="muted">none yet</span>}
                  </td>
                  <td role="cell">
                    <button type="button" class="small" onClick={() => setOpen(open === hook.id ? undefined : hook.id)}>
                      {open === hook.id ? 'Hide deliveries' : 'Deliveries'}
                    </button>{' '}
                    <ConfirmButton
                      label="Delete"
                      question={
                        <>
                          Delete the webhook to <code>{hook.url}</code>? Its pending deliveries are dropped.
                        </>
                      }
                      onConfirm={async () => {
                        await api('DELETE', `/v1/webhooks/${encodeURIComponent(hook.id)}`);
                        if (created?.id === hook.id) setCreated(undefined);
                        await hooks.reload();
                      }}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {open && <Deliveries webhookId={open} onChange={() => void hooks.reload()} />}
    </section>
  );
}

function CreateWebhookForm({ onCreated }: { onCreated: (hook: CreatedWebhook) => Promise<void> }): JSX.Element {
  const action = useAction();
  const submit = async (event: SubmitEvent): Promise<void> => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    const url = String(data.get('url') ?? '').trim();
    const events = data.getAll('events').map(String) as WebhookEventType[];
    await action.run(async () => {
      await onCreated(await api<CreatedWebhook>('POST', '/v1/webhooks', { url, events }));
      form.reset();
    });
  };
  return (
    <form class="card" onSubmit={(event) => void submit(event)}>
      <label>
        Receiver URL
        <input name="url" type="url" required maxLength={2000} placeholder="https://hooks.example.com/svc" />
      </label>
      <fieldset class="event-types">
        <legend>Events (none checked: all)</legend>
        {EVENT_TYPES.map((type) => (
          <label key={type} class="check">
            <input type="checkbox" name="events" value={type} /> <code>{type}</code>
          </label>
        ))}
      </fieldset>
      <button type="submit" class="primary" disabled={action.busy}>
        Add webhook
      </button>
      <ErrorText message={action.error} />
    </form>
  );
}

/** The signing secret of the webhook just added; the server never returns it again. */
function NewSecret({ created, onDismiss }: { created: CreatedWebhook; onDismiss: () => void }): JSX.Element {
  return (
    <div class="card secret" role="region" aria-label="New webhook secret">
      <p>
        <strong>Signing secret</strong> for <code>{created.url}</code>. Copy it now: you won't see this again.
      </p>
      <div class="secret-row">
        <code class="token" data-testid="new-webhook-secret">
          {created.secret}
        </code>
        <CopyButton text={created.secret} what="secret" />
      </div>
      <button type="button" class="small" onClick={onDismiss}>
        Done
      </button>
    </div>
  );
}

/** A webhook's deliveries, newest first, each attempt's outcome, and a resend button. */
function Deliveries({ webhookId, onChange }: { webhookId: string; onChange: () => void }): JSX.Element {
  const list = useResource(
    () => api<{ deliveries: WebhookDelivery[] }>('GET', `/v1/webhooks/${encodeURIComponent(webhookId)}/deliveries`),
    [webhookId],
    POLL_MS,
  );
  const action = useAction();
  const resend = async (delivery: WebhookDelivery): Promise<void> => {
    await action.run(async () => {
      await api('POST', `/v1/webhooks/${encodeURIComponent(webhookId)}/deliveries/${encodeURIComponent(delivery.id)}/retry`);
      await list.reload();
      onChange();
    });
  };
  return (
    <div class="card" role="region" aria-label="Deliveries">
      <h2>Deliveries</h2>
      <ErrorText message={list.error ?? action.error} />
      {list.data === undefined ? (
        list.loading && <Loading />
      ) : list.data.deliveries.length === 0 ? (
        <EmptyState>No deliveries yet.</EmptyState>
      ) : (
        <table class="cards" role="table">
          <TableHead columns={['Event', 'State', 'Attempts']} withActions />
          <tbody role="rowgroup">
            {list.data.deliveries.map((delivery) => (
              <tr key={delivery.id} role="row" data-delivery={delivery.id}>
                <td role="cell" data-label="Event">
                  <code>{delivery.eventType}</code> <span class="muted">{delivery.eventId}</span>
                </td>
                <td role="cell" data-label="State" data-testid="delivery-state">
                  {delivery.state}
                  {delivery.nextAttemptAt && <span class="muted"> (next {formatTime(delivery.nextAttemptAt)})</span>}
                </td>
                <td role="cell" data-label="Attempts">
                  {delivery.attempts.map((a, i) => (
                    <div key={i} class="attempt">
                      {formatTime(a.at)}: {a.statusCode ?? a.error} <span class="muted">{a.durationMs} ms</span>
                    </div>
                  ))}
                </td>
                <td role="cell">
                  <button type="button" class="small" disabled={action.busy} onClick={() => void resend(delivery)}>
                    Resend
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
