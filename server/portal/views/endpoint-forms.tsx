// Add webhook, Edit URL, and the confirmation step of every change that disables pending
// deliveries (URL edit, secret rotation, disabling). The confirmation is a page of its own,
// so it holds without JavaScript; rotation and disabling also ask for a fresh proof (the
// member token or a passkey, views/proof.tsx) when the last one is older than PORTAL_REVERIFY_AFTER.
import { WEBHOOK_URL_MAX_LENGTH } from '../../../generated/vocabulary.ts';
import { ROUTABLE_TYPES, type EndpointRecord } from '../../domain/model.ts';
import type { Chrome } from './layout.tsx';
import { CsrfField, Layout } from './layout.tsx';
import { Breadcrumbs, Notice } from './parts.tsx';
import { ProofField } from './proof.tsx';
import { RateField } from './rate.tsx';
import { SchemeField } from './scheme.tsx';
import { endpointHref } from './webhooks.tsx';

/** A refused URL: the broken destination rule and the service's explanation. */
export interface UrlRefusal {
  rule: string | null;
  detail: string;
}

function Refusal(props: { refusal: UrlRefusal }) {
  return (
    <Notice tone="error" title="This URL cannot be used" testId="url-refusal">
      {props.refusal.rule ? (
        <p>
          Broken rule: <span class="rule" data-testid="refused-rule">{props.refusal.rule}</span>
        </p>
      ) : null}
      <p>{props.refusal.detail}</p>
    </Notice>
  );
}

function UrlRules() {
  return (
    <details class="field__hint">
      <summary>URL rules</summary>
      <ul class="steps">
        <li>HTTPS on the default port 443; no custom ports.</li>
        <li>A host that resolves to a public IPv4 address: not localhost, private, link-local or other reserved ranges; IPv6-only hosts are not supported.</li>
        <li>No user name or password in the URL, no #fragment.</li>
        <li>Accepts a direct POST: redirects are never followed.</li>
      </ul>
    </details>
  );
}

function UrlField(props: { value: string; invalid: boolean }) {
  return (
    <div class="field">
      <label for="url">Endpoint URL</label>
      <input
        id="url"
        name="url"
        type="url"
        required
        maxlength={WEBHOOK_URL_MAX_LENGTH}
        value={props.value}
        placeholder="https://hooks.example.com/payments/webhooks"
        autocomplete="off"
        spellcheck={false}
        aria-invalid={props.invalid ? 'true' : undefined}
      />
      <UrlRules />
    </div>
  );
}

/** The form field of one event type's checkbox (typesOf reads them back). */
export const eventTypeField = (type: string): string => `type:${type}`;

/** The event types ticked on a form; none ticked is every type (undefined). */
export function typesOf(fields: Record<string, string>): string[] | undefined {
  const ticked = ROUTABLE_TYPES.filter((t) => fields[eventTypeField(t)] !== undefined);
  return ticked.length === 0 ? undefined : ticked;
}

/** Which order events the endpoint receives (issue 68): none ticked is every type, including later ones. */
function EventTypesField() {
  return (
    <fieldset class="field" data-testid="event-types">
      <legend>Events to send</legend>
      {ROUTABLE_TYPES.map((t) => (
        <label class="check">
          <input type="checkbox" name={eventTypeField(t)} value="on" data-testid={`event-type-${t}`} /> <code>{t}</code>
        </label>
      ))}
      <p class="field__hint">Leave all unticked to receive every order event, including types added later.</p>
    </fieldset>
  );
}

export function NewEndpointPage(props: { chrome: Chrome; csrf: string; environment: string; url?: string; refusal?: UrlRefusal }) {
  return (
    <Layout {...props.chrome}>
      <Breadcrumbs items={[{ href: '/portal/webhooks', label: 'Webhooks' }, { label: 'Add webhook' }]} />
      <section class="card card--medium">
        <h1>Add webhook</h1>
        <p class="lead">
          The {props.environment} environment will send the order events you choose and this endpoint's test webhooks to this URL. Its signing
          secret is shown once, right after you add it.
        </p>
        {props.refusal ? <Refusal refusal={props.refusal} /> : null}
        <form method="post" action="/portal/webhooks/endpoints" class="form">
          <CsrfField token={props.csrf} />
          <UrlField value={props.url ?? ''} invalid={props.refusal !== undefined} />
          <EventTypesField />
          <SchemeField value="service-signature" />
          <RateField value={null} />
          <div class="form-actions">
            <button type="submit" class="button button--primary" data-testid="create-endpoint">
              Add webhook
            </button>
            <a class="button button--quiet" href="/portal/webhooks">
              Cancel
            </a>
          </div>
        </form>
      </section>
    </Layout>
  );
}

export function EditUrlPage(props: { chrome: Chrome; csrf: string; endpoint: EndpointRecord; url?: string; refusal?: UrlRefusal }) {
  const e = props.endpoint;
  return (
    <Layout {...props.chrome}>
      <Breadcrumbs items={[{ href: '/portal/webhooks', label: 'Webhooks' }, { label: 'Edit URL' }]} />
      <section class="card card--medium">
        <h1>Edit URL</h1>
        <p class="lead">
          Currently <code>{e.url}</code> (version {e.version}). The signing secret stays the same.
        </p>
        {props.refusal ? <Refusal refusal={props.refusal} /> : null}
        <form method="post" action={endpointHref(e.id, 'edit')} class="form">
          <CsrfField token={props.csrf} />
          <input type="hidden" name="version" value={String(e.version)} />
          <UrlField value={props.url ?? e.url} invalid={props.refusal !== undefined} />
          <div class="form-actions">
            <button type="submit" class="button button--primary" data-testid="review-url">
              Review change
            </button>
            <a class="button button--quiet" href="/portal/webhooks">
              Cancel
            </a>
          </div>
        </form>
      </section>
    </Layout>
  );
}

export type ConfirmKind = 'edit' | 'disable' | 'rotate';

const CONFIRM: Record<ConfirmKind, { title: string; button: string; danger: boolean }> = {
  edit: { title: 'Change the endpoint URL?', button: 'Change URL', danger: false },
  disable: { title: 'Disable this endpoint?', button: 'Disable endpoint', danger: true },
  rotate: { title: 'Rotate the signing secret?', button: 'Rotate secret', danger: true },
};

function Consequences(props: { kind: ConfirmKind; endpoint: EndpointRecord; newUrl?: string }) {
  const v = props.endpoint.version;
  switch (props.kind) {
    case 'edit':
      return (
        <ul class="steps">
          <li>
            New URL: <code>{props.newUrl}</code>
          </li>
          <li>
            The version goes from {v} to {v + 1}. <strong>Pending deliveries of version {v} become disabled</strong>: they are never sent to the new
            URL.
          </li>
          <li>Failed deliveries keep their state and can be retried to the new URL.</li>
          <li>The signing secret stays the same.</li>
        </ul>
      );
    case 'disable':
      return (
        <ul class="steps">
          <li>
            <strong>Pending deliveries become disabled</strong> and are never sent.
          </li>
          <li>While no endpoint is active, new events get no delivery (they stay readable through GET /v2/events).</li>
          <li>A disabled endpoint cannot be re-enabled: add a new webhook instead. Its activity stays visible.</li>
        </ul>
      );
    case 'rotate':
      return (
        <ul class="steps">
          <li>A new secret is shown once, on the next page. The current secret stops signing new attempts at once.</li>
          <li>
            The version goes from {v} to {v + 1}. <strong>Pending deliveries of version {v} become disabled</strong>; they are not re-sent with the
            new secret.
          </li>
          <li>A request already in flight may still carry a signature made with the previous secret: let your receiver accept both for a few minutes.</li>
        </ul>
      );
  }
}

export function ConfirmPage(props: {
  chrome: Chrome;
  csrf: string;
  kind: ConfirmKind;
  endpoint: EndpointRecord;
  newUrl?: string;
  /** Asks for a fresh proof (the last one is older than PORTAL_REVERIFY_AFTER): with the passkey offered too, or not; null: fresh. */
  reverify?: { passkey: boolean } | null;
  reverifyAfterMs?: number;
  error?: string | undefined;
}) {
  const c = CONFIRM[props.kind];
  const e = props.endpoint;
  return (
    <Layout {...props.chrome}>
      <Breadcrumbs items={[{ href: '/portal/webhooks', label: 'Webhooks' }, { label: c.button }]} />
      <section class={`card card--medium${c.danger ? ' card--danger' : ''}`} data-testid={`confirm-${props.kind}`}>
        <h1>{c.title}</h1>
        <p class="lead">
          Endpoint <code>{e.url}</code>, version {e.version}.
        </p>
        {props.error ? (
          <Notice tone="error" title="Not confirmed" testId="confirm-error">
            <p>{props.error}</p>
          </Notice>
        ) : null}
        <Consequences kind={props.kind} endpoint={e} newUrl={props.newUrl} />
        <form method="post" action={endpointHref(e.id, props.kind)} class="form">
          <CsrfField token={props.csrf} />
          <input type="hidden" name="version" value={String(e.version)} />
          <input type="hidden" name="confirm" value="yes" />
          {props.newUrl !== undefined ? <input type="hidden" name="url" value={props.newUrl} /> : null}
          {props.reverify ? <ProofField passkey={props.reverify.passkey} action={c.button.toLowerCase()} reverifyAfterMs={props.reverifyAfterMs ?? 0} /> : null}
          <div class="form-actions">
            <button type="submit" class={`button ${c.danger ? 'button--danger' : 'button--primary'}`} data-testid="confirm">
              {props.reverify ? `${c.button} (with token)` : c.button}
            </button>
            <a class="button button--quiet" href="/portal/webhooks">
              Cancel
            </a>
          </div>
        </form>
      </section>
    </Layout>
  );
}
