// The proof of presence a sensitive change asks for: the member token typed again, or a fresh
// passkey assertion (portal.js runs it and submits the form with the answer); both are offered
// when the member has a passkey.
import type { Chrome } from './layout.tsx';
import { CsrfField, Layout } from './layout.tsx';
import { Breadcrumbs, Notice } from './parts.tsx';

/** "5 minutes", "30 seconds": how PORTAL_REVERIFY_AFTER reads in a sentence. */
export function durationText(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000} minute${ms === 60_000 ? '' : 's'}`;
  return `${Math.max(1, Math.round(ms / 1000))} seconds`;
}

/**
 * The proof fields inside a form: the member token (always: it is the way back when a passkey's
 * device is lost) and, when the member has a passkey this origin can use, the passkey button
 * with its hidden answer (portal.js fills it and submits the form).
 */
export function ProofField(props: { passkey: boolean; action: string; reverifyAfterMs: number }) {
  const age = durationText(props.reverifyAfterMs);
  return (
    <>
      <p class="field__hint">
        You last proved it was you more than {age} ago. {props.passkey ? 'Confirm with your passkey, or enter your member token,' : 'Enter your member token again'} to {props.action}.
      </p>
      {props.passkey ? (
        <div class="field" data-testid="reverify-passkey">
          <input type="hidden" name="credential" value="" disabled />
          <button type="button" class="button button--primary" hidden data-webauthn="reverify" data-options="/portal/api/passkeys/assertion-options" data-testid="confirm-passkey">
            Confirm with passkey
          </button>
          <p class="field__hint" role="status" data-webauthn-status data-testid="passkey-status">
            <noscript>Passkeys need JavaScript: use your member token instead.</noscript>
          </p>
        </div>
      ) : null}
      <div class="field" data-testid="reverify">
        <label for="token">{props.passkey ? 'Or your member token' : 'Confirm it is you: member token'}</label>
        <input id="token" name="token" type="password" autocomplete="off" spellcheck={false} placeholder="mt_…" />
      </div>
    </>
  );
}

/** A change waiting for its proof: the asked fields travel along, hidden, and are posted again. */
export function ReverifyPage(props: {
  chrome: Chrome;
  csrf: string;
  action: { href: string; label: string };
  fields: [string, string][];
  /** The passkey is offered beside the member token. */
  passkey: boolean;
  reverifyAfterMs: number;
  error?: string | undefined;
}) {
  return (
    <Layout {...props.chrome}>
      <Breadcrumbs items={[{ href: '/portal/webhooks', label: 'Webhooks' }, { label: 'Confirm it is you' }]} />
      <section class="card card--medium" data-testid="reverify-page">
        <h1>Confirm it is you</h1>
        <p class="lead">To {props.action.label}, the portal needs a fresh proof that it is you. Nothing has changed yet.</p>
        {props.error ? (
          <Notice tone="error" title="Not confirmed" testId="confirm-error">
            <p>{props.error}</p>
          </Notice>
        ) : null}
        <form method="post" action={props.action.href} class="form">
          <CsrfField token={props.csrf} />
          {props.fields.map(([name, value]) => (
            <input type="hidden" name={name} value={value} />
          ))}
          <ProofField passkey={props.passkey} action={props.action.label} reverifyAfterMs={props.reverifyAfterMs} />
          <div class="form-actions">
            <button type="submit" class={props.passkey ? 'button' : 'button button--primary'} data-testid="confirm">
              Confirm with token
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
