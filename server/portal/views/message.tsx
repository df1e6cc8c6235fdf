// A page that only says something: errors (403, 404, 500) and dead ends.
import type { Chrome } from './layout.tsx';
import { Layout } from './layout.tsx';
import { Notice } from './parts.tsx';

export function MessagePage(props: {
  chrome: Chrome;
  tone: 'info' | 'warning' | 'error';
  heading: string;
  detail: string;
  requestId?: string;
  back?: { href: string; label: string };
}) {
  return (
    <Layout {...props.chrome}>
      <section class="card card--narrow">
        <h1>{props.heading}</h1>
        <Notice tone={props.tone} testId="message">
          <p>{props.detail}</p>
          {props.requestId ? (
            <p class="muted small">
              Request id: <code>{props.requestId}</code>
            </p>
          ) : null}
        </Notice>
        <p>
          <a class="button" href={props.back?.href ?? '/portal/webhooks'}>
            {props.back?.label ?? 'Back to webhooks'}
          </a>
        </p>
      </section>
    </Layout>
  );
}
