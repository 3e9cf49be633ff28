import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { EmptyState, ErrorText, Loading, PageHeader } from '../components/bits.js';
import { ConfirmButton } from '../components/confirm-button.js';
import { CopyButton } from '../components/copy-button.js';
import { api } from '../lib/api.js';
import { formatTime } from '../lib/format.js';
import type { Domain, DomainCheck } from '../lib/types.js';
import { useAction } from '../lib/use-action.js';
import { useResource } from '../lib/use-resource.js';

/** Custom domains: add one, publish its TXT record, verify it, see its certificate, delete it. */
export function DomainsPage(): JSX.Element {
  const domains = useResource(() => api<{ domains: Domain[] }>('GET', '/v1/domains'), []);
  return (
    <section>
      <PageHeader title="Domains" />
      <AddDomainForm onAdded={domains.reload} />
      <ErrorText message={domains.error} />
      {domains.data === undefined ? (
        domains.loading && <Loading />
      ) : domains.data.domains.length === 0 ? (
        <EmptyState>
          No custom domains yet: add one above, then run <code>SVC_DOMAIN=app.example.com svc http 3000</code>.
        </EmptyState>
      ) : (
        <div class="stack">
          {domains.data.domains.map((domain) => (
            <DomainCard key={domain.id} domain={domain} onChanged={domains.reload} />
          ))}
        </div>
      )}
    </section>
  );
}

function AddDomainForm({ onAdded }: { onAdded: () => Promise<void> }): JSX.Element {
  const action = useAction();
  const submit = async (event: SubmitEvent): Promise<void> => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const host = String(new FormData(form).get('host') ?? '').trim();
    await action.run(async () => {
      await api('POST', '/v1/domains', { host });
      form.reset();
      await onAdded();
    });
  };
  return (
    <form class="card inline-form" onSubmit={(event) => void submit(event)}>
      <label>
        Domain
        <input name="host" type="text" required placeholder="app.example.com" autocomplete="off" spellcheck={false} />
      </label>
      <button type="submit" class="primary" disabled={action.busy}>
        Add domain
      </button>
      <ErrorText message={action.error} />
    </form>
  );
}

function DomainCard({ domain, onChanged }: { domain: Domain; onChanged: () => Promise<void> }): JSX.Element {
  const [check, setCheck] = useState<DomainCheck['verification'] | undefined>(undefined);
  const action = useAction();
  const verify = (): Promise<boolean> =>
    action.run(async () => {
      const result = await api<DomainCheck>('POST', `/v1/domains/${encodeURIComponent(domain.id)}/verify`);
      setCheck(result.verification);
      await onChanged();
    });
  const { certificate } = domain;
  return (
    <article class="card domain" aria-label={domain.host}>
      <header class="row">
        <h2>{domain.host}</h2>
        <span class={`badge ${domain.verified ? 'online' : 'pending'}`}>{domain.verified ? 'verified' : 'pending verification'}</span>
      </header>
      <dl class="fields">
        <dt>TXT name</dt>
        <dd>
          <code>{domain.txtRecord.name}</code> <CopyButton text={domain.txtRecord.name} what="TXT name" />
        </dd>
        <dt>TXT value</dt>
        <dd>
          <code>{domain.txtRecord.value}</code> <CopyButton text={domain.txtRecord.value} what="TXT value" />
        </dd>
        {domain.target && (
          <>
            <dt>Point it at</dt>
            <dd>
              {domain.target.cname ? (
                <>
                  CNAME <code>{domain.target.cname}</code>
                </>
              ) : (
                <>A {domain.target.a.join(', ')}</>
              )}
            </dd>
          </>
        )}
        <dt>Certificate</dt>
        <dd>
          {certificate.state}
          {certificate.expiresAt && <> · expires {formatTime(certificate.expiresAt)}</>}
          {certificate.error && <span class="error"> · {certificate.error}</span>}
        </dd>
        <dt>Added</dt>
        <dd>{formatTime(domain.createdAt)}</dd>
      </dl>
      {check && (
        <p class={check.ok ? 'ok' : 'error'} role="status">
          {check.message}
        </p>
      )}
      <ErrorText message={action.error} />
      <div class="actions">
        {!domain.verified && (
          <button type="button" onClick={() => void verify()} disabled={action.busy}>
            Verify
          </button>
        )}
        <ConfirmButton
          label="Delete"
          question={
            <>
              Delete <strong>{domain.host}</strong>? Tunnels bound to it stop, and its certificate is removed.
            </>
          }
          onConfirm={async () => {
            await api('DELETE', `/v1/domains/${encodeURIComponent(domain.id)}`);
            await onChanged();
          }}
        />
      </div>
    </article>
  );
}
