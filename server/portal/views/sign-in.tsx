import { Layout } from './layout.tsx';
import { Notice } from './parts.tsx';

export function SignInPage(props: { csrf: string; error?: { title: string; detail: string }; notice?: string }) {
  return (
    <Layout title="Sign in">
      <section class="card card--narrow sign-in">
        <h1>Sign in</h1>
        <p class="lead">Use the member token of your workspace, or a passkey you added, to manage webhooks and read their activity.</p>
        {props.error ? (
          <Notice tone="error" title={props.error.title} testId="sign-in-error">
            <p>{props.error.detail}</p>
          </Notice>
        ) : null}
        {props.notice ? (
          <Notice tone="info" testId="sign-in-notice">
            <p>{props.notice}</p>
          </Notice>
        ) : null}
        <form method="post" action="/portal/sign-in" class="form" autocomplete="off">
          <input type="hidden" name="_csrf" value={props.csrf} />
          <div class="field">
            <label for="token">Member token</label>
            <input id="token" name="token" type="password" required autocomplete="off" spellcheck={false} placeholder="mt_…" />
            <p class="field__hint">Starts with mt_. It was shown once when your membership was created.</p>
          </div>
          <fieldset class="field">
            <legend>Environment</legend>
            <div class="choice-row">
              <label class="choice">
                <input type="radio" name="environment" value="test" checked /> Test
              </label>
              <label class="choice">
                <input type="radio" name="environment" value="live" /> Live
              </label>
            </div>
          </fieldset>
          <button type="submit" class="button button--primary button--block" data-testid="sign-in-token">
            Sign in
          </button>
          <input type="hidden" name="credential" value="" disabled />
          <div class="passkey-sign-in" data-testid="passkey-sign-in">
            <p class="or muted small">or, with a passkey you added to your account</p>
            <button
              type="button"
              class="button button--block"
              hidden
              data-webauthn="sign-in"
              data-options="/portal/sign-in/passkey/options"
              data-action="/portal/sign-in/passkey"
              data-testid="sign-in-passkey"
            >
              Sign in with a passkey
            </button>
            <p class="field__hint" role="status" data-webauthn-status data-testid="passkey-status"></p>
          </div>
        </form>
      </section>
    </Layout>
  );
}
