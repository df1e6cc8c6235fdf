// Account → Passkeys: the member's passkeys (name, added, last used, remove), adding one, and
// the page that runs the browser's ceremony for a named new passkey.
import type { PasskeyRecord } from '../../domain/model.ts';
import { PASSKEY_NAME_MAX } from '../passkeys/flows.ts';
import type { Chrome } from './layout.tsx';
import { CsrfField, Layout } from './layout.tsx';
import { Breadcrumbs, Notice } from './parts.tsx';

const day = (ms: number | null): string => (ms === null ? 'Never' : new Date(ms).toISOString().slice(0, 16).replace('T', ' ') + ' UTC');

const DONE: Record<string, string> = {
  added: 'Passkey added. You can sign in with it from now on.',
  removed: 'Passkey removed. It no longer signs you in.',
};

function PasskeyRow(props: { passkey: PasskeyRecord; csrf: string }) {
  const p = props.passkey;
  return (
    <li class="passkey" data-testid="passkey">
      <div class="passkey__text">
        <strong class="passkey__name" data-testid="passkey-name">
          {p.name}
        </strong>
        <span class="muted small">
          Added {day(p.createdAt)} · Last used <span data-testid="passkey-last-used">{day(p.lastUsedAt)}</span>
          {p.multiDevice ? ' · Synced' : ''}
        </span>
      </div>
      <form method="post" action={`/portal/account/passkeys/${p.id}/remove`}>
        <CsrfField token={props.csrf} />
        <button type="submit" class="button button--quiet button--small" data-testid="remove-passkey">
          Remove
        </button>
      </form>
    </li>
  );
}

export function PasskeysPage(props: { chrome: Chrome; csrf: string; passkeys: PasskeyRecord[]; unavailable?: string | undefined; done?: string | undefined }) {
  const done = props.done ? DONE[props.done] : undefined;
  return (
    <Layout {...props.chrome}>
      <Breadcrumbs items={[{ href: '/portal/webhooks', label: 'Webhooks' }, { label: 'Passkeys' }]} />
      <section class="card card--medium" data-testid="passkeys-page">
        <h1>Passkeys</h1>
        <p class="lead">
          Sign in with your device's screen lock or security key instead of pasting your member token, and confirm secret rotations with it.
          Your member token keeps working as the way back in.
        </p>
        {done ? (
          <Notice tone="info" testId="passkeys-done">
            <p>{done}</p>
          </Notice>
        ) : null}
        {props.unavailable ? (
          <Notice tone="warning" title="Passkeys are not available here" testId="passkeys-unavailable">
            <p>{props.unavailable}</p>
          </Notice>
        ) : null}
        {props.passkeys.length === 0 ? (
          <p data-testid="no-passkeys">You have no passkey yet.</p>
        ) : (
          <ul class="passkeys">
            {props.passkeys.map((p) => (
              <PasskeyRow passkey={p} csrf={props.csrf} />
            ))}
          </ul>
        )}
        {props.unavailable ? null : (
          <form method="post" action="/portal/account/passkeys/add" class="form">
            <CsrfField token={props.csrf} />
            <div class="field">
              <label for="passkey-name">Name of the new passkey</label>
              <input id="passkey-name" name="name" type="text" required maxlength={PASSKEY_NAME_MAX} placeholder="Work laptop" autocomplete="off" />
            </div>
            <div class="form-actions">
              <button type="submit" class="button button--primary" data-testid="add-passkey">
                Add a passkey
              </button>
            </div>
          </form>
        )}
      </section>
    </Layout>
  );
}

/** Runs the registration in the browser, then posts its answer with the name. */
export function CreatePasskeyPage(props: { chrome: Chrome; csrf: string; name: string; error?: string | undefined }) {
  return (
    <Layout {...props.chrome}>
      <Breadcrumbs items={[{ href: '/portal/account/passkeys', label: 'Passkeys' }, { label: 'Add a passkey' }]} />
      <section class="card card--medium" data-testid="create-passkey-page">
        <h1>Add a passkey</h1>
        <p class="lead">
          Your browser will ask your device (or a security key) to create a passkey named <strong>{props.name}</strong>, and to check it is you.
        </p>
        {props.error ? (
          <Notice tone="error" title="Not added" testId="passkey-error">
            <p>{props.error}</p>
          </Notice>
        ) : null}
        <form method="post" action="/portal/account/passkeys" class="form">
          <CsrfField token={props.csrf} />
          <input type="hidden" name="name" value={props.name} />
          <input type="hidden" name="credential" value="" disabled />
          <div class="form-actions">
            <button type="button" class="button button--primary" hidden data-webauthn="register" data-options="/portal/api/passkeys/registration-options" data-testid="create-passkey">
              Create passkey
            </button>
            <a class="button button--quiet" href="/portal/account/passkeys">
              Cancel
            </a>
          </div>
          <p class="field__hint" role="status" data-webauthn-status data-testid="passkey-status">
            <noscript>Adding a passkey needs JavaScript.</noscript>
          </p>
        </form>
      </section>
    </Layout>
  );
}
