import { Layout } from './layout.tsx';
import { Notice } from './parts.tsx';

export function SignInPage(props: { csrf: string; error?: { title: string; detail: string }; notice?: string }) {
  return (
    <Layout title="Sign in">
      <section class="card card--narrow sign-in">
        <h1>Sign in</h1>
        <p class="lead">Use the member token of your workspace to manage webhooks and read their activity.</p>
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
          <button type="submit" class="button button--primary button--block">
            Sign in
          </button>
        </form>
      </section>
    </Layout>
  );
}
