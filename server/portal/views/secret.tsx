// The one-time reveal of a signing secret: the direct answer to the POST that created the
// endpoint or rotated its secret (never a redirect, never in a URL, Cache-Control: no-store).
// It is the only page that ever contains a secret.
import type { EndpointRecord } from '../../domain/model.ts';
import type { Chrome } from './layout.tsx';
import { Layout } from './layout.tsx';
import { Notice } from './parts.tsx';

export function SecretPage(props: { chrome: Chrome; kind: 'created' | 'rotated'; endpoint: EndpointRecord; secret: string }) {
  const e = props.endpoint;
  return (
    <Layout {...props.chrome}>
      <section class="card card--medium" data-testid="secret-reveal">
        <h1>{props.kind === 'created' ? 'Webhook added' : 'Signing secret rotated'}</h1>
        <p class="lead">
          <code>{e.url}</code> · version {e.version}
        </p>
        <Notice tone="warning" title="Copy the signing secret now: you will not see it again" testId="secret-warning">
          <p>
            It is shown only on this page. After you leave or reload it, nobody can display it again, not even an administrator; if it is lost,
            rotate the secret.
          </p>
        </Notice>
        <div class="secret">
          <code class="secret__value" id="signing-secret" data-testid="signing-secret">
            {props.secret}
          </code>
          <button type="button" class="button button--primary" data-copy-target="signing-secret" data-copy-status="copy-status" data-testid="copy-secret" hidden>
            Copy
          </button>
        </div>
        <p class="copy-status" id="copy-status" aria-live="polite"></p>
        <ol class="steps">
          <li>Store it in your receiver's secret store, never in code or logs.</li>
          <li>
            Verify every delivery: HMAC-SHA256 of <code>t.body</code> keyed with this secret, compared with <code>v1</code> of the Service-Signature
            header, within five minutes of <code>t</code>.
          </li>
          {props.kind === 'rotated' ? (
            <li>
              Pending deliveries of the previous version are now disabled. A request already in flight may still carry a signature made with the
              previous secret: accept both briefly.
            </li>
          ) : (
            <li>Send a test webhook to check that your receiver verifies and accepts it.</li>
          )}
        </ol>
        <a class="button" href="/portal/webhooks" data-testid="secret-done">
          I have stored it, back to webhooks
        </a>
      </section>
    </Layout>
  );
}
