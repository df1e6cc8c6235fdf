// One delivery: its attempts (time, duration, answer), the last HTTP response, the payload
// pretty-printed, and "Retry webhook" for a failed one. Response bodies are the receiver's,
// untrusted: they are only ever text here.
import type { DeliveryDetailView } from '../../domain/deliveries/deliveries.ts';
import type { Chrome } from './layout.tsx';
import { CsrfField, Layout } from './layout.tsx';
import { Answer, Breadcrumbs, formatDuration, KIND_LABEL, Notice, StateBadge, Time } from './parts.tsx';

export interface DeliveryPageProps {
  chrome: Chrome;
  view: DeliveryDetailView;
  canManage: boolean;
  csrf: string;
  notice?: { tone: 'success' | 'error' | 'warning'; title: string; detail: string };
}

function ResponseBody(props: { body: string | null }) {
  if (props.body === null) return <span class="muted">No body (no HTTP response).</span>;
  if (props.body === '') return <span class="muted">Empty body.</span>;
  return <pre class="code code--light">{props.body}</pre>;
}

export function DeliveryPage(props: DeliveryPageProps) {
  const { delivery: d, eventType, progress, attempts, lastAttempt, payload } = props.view;
  const retryable = d.state === 'failed';
  const lastResponse = attempts.find((a) => a.outcome === 'response') ?? null;
  return (
    <Layout {...props.chrome}>
      <Breadcrumbs items={[{ href: '/portal/webhooks', label: 'Webhooks' }, { href: '/portal/webhooks#activity', label: 'Activity' }, { label: d.id }]} />
      <div class="page-head">
        <div>
          <h1 class="title-mono">{eventType}</h1>
          <p class="lead">
            {KIND_LABEL[d.kind]} to <code>{d.url}</code>
          </p>
        </div>
        <StateBadge progress={progress} id="delivery-state" large />
      </div>

      {props.notice ? (
        <Notice tone={props.notice.tone} title={props.notice.title} testId="delivery-notice">
          <p>{props.notice.detail}</p>
        </Notice>
      ) : null}

      <section class="card">
        <dl class="facts">
          <div>
            <dt>Delivery</dt>
            <dd class="id">{d.id}</dd>
          </div>
          <div>
            <dt>Event id</dt>
            <dd class="id" data-testid="event-id">
              {d.eventId}
            </dd>
          </div>
          {d.orderId ? (
            <div>
              <dt>Order</dt>
              <dd>
                {d.merchantReference}
                <span class="sub id">{d.orderId}</span>
              </dd>
            </div>
          ) : null}
          {d.transactionId ? (
            <div>
              <dt>Payout</dt>
              <dd class="id">{d.transactionId}</dd>
            </div>
          ) : null}
          <div>
            <dt>Attempts</dt>
            <dd>
              {d.attemptCount} of 10 in cycle {d.cycle}
            </dd>
          </div>
          <div>
            <dt>Next attempt</dt>
            <dd>
              <Time at={d.state === 'pending' ? d.nextAttemptAt : null} />
            </dd>
          </div>
          <div>
            <dt>Created</dt>
            <dd>
              <Time at={d.createdAt} />
            </dd>
          </div>
          <div>
            <dt>Delivered</dt>
            <dd>
              <Time at={d.deliveredAt} empty="Not delivered" />
            </dd>
          </div>
          {d.endpointId ? (
            <div>
              <dt>Endpoint version</dt>
              <dd>
                <span class="id">{d.endpointId}</span> · v{d.endpointVersion}
              </dd>
            </div>
          ) : null}
        </dl>
        {retryable && props.canManage ? (
          <form method="post" action={`/portal/webhooks/deliveries/${encodeURIComponent(d.id)}/retry`} class="actions">
            <CsrfField token={props.csrf} />
            <button type="submit" class="button button--primary" data-testid="retry">
              <span aria-hidden="true">↻</span> Retry webhook
            </button>
            <span class="muted small">Sends the original event id and payload to the current endpoint, in a new cycle of up to ten attempts.</span>
          </form>
        ) : retryable ? (
          <p class="muted small">This delivery failed. An administrator or developer can retry it.</p>
        ) : progress === 'disabled' ? (
          <p class="muted small">Disabled deliveries are never sent to a changed or replacement endpoint, and cannot be retried.</p>
        ) : null}
      </section>

      <section class="card" aria-labelledby="attempts-title">
        <div class="card__head">
          <h2 id="attempts-title">Attempts</h2>
          <span class="muted small">Newest first</span>
        </div>
        <div class="table-wrap">
          <table class="attempts stack">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">Started</th>
                <th scope="col" class="num">
                  Duration
                </th>
                <th scope="col">Answer</th>
                <th scope="col">Body</th>
              </tr>
            </thead>
            <tbody id="attempt-rows">
              {attempts.length === 0 ? (
                <tr>
                  <td colspan={5} class="empty">
                    No attempt yet.
                  </td>
                </tr>
              ) : (
                attempts.map((a) => (
                  <tr data-attempt={`${a.cycle}.${a.number}`}>
                    <td class="nowrap stack__lead">
                      <strong>#{a.number}</strong>
                      {d.cycle > 1 ? <span class="sub">cycle {a.cycle}</span> : null}
                    </td>
                    <td class="nowrap" data-label="Started">
                      <Time at={a.startedAt} />
                    </td>
                    <td class="num" data-label="Duration">
                      {formatDuration(a.durationMs)}
                    </td>
                    <td data-label="Answer">
                      <Answer attempt={a} />
                    </td>
                    <td data-label="Body">
                      {a.responseBody ? (
                        <details class="body">
                          <summary>{`${a.responseBody.length} characters`}</summary>
                          <pre class="code code--light">{a.responseBody}</pre>
                        </details>
                      ) : (
                        <span class="muted">—</span>
                      )}
                    </td>
                  </tr>
                ))
              )}
            </tbody>
          </table>
        </div>
      </section>

      <section class="card" aria-labelledby="response-title" data-testid="last-response">
        <h2 id="response-title">Last HTTP response</h2>
        {lastResponse ? (
          <>
            <dl class="facts">
              <div>
                <dt>Status</dt>
                <dd>
                  <Answer attempt={lastResponse} />
                </dd>
              </div>
              <div>
                <dt>Received</dt>
                <dd>
                  <Time at={lastResponse.startedAt + lastResponse.durationMs} />
                </dd>
              </div>
              <div>
                <dt>Attempt</dt>
                <dd>
                  {lastResponse.number} (cycle {lastResponse.cycle})
                </dd>
              </div>
            </dl>
            <ResponseBody body={lastResponse.responseBody} />
            <p class="untrusted-note">The receiver's answer (first 2 KiB), shown as plain text.</p>
          </>
        ) : lastAttempt ? (
          <p class="muted">
            No HTTP response yet: the last attempt ended with <Answer attempt={lastAttempt} />.
          </p>
        ) : (
          <p class="muted">No HTTP response yet.</p>
        )}
      </section>

      <section class="card" aria-labelledby="payload-title">
        <h2 id="payload-title">Payload</h2>
        <p class="muted small">The exact JSON that is signed and sent with every attempt, formatted for reading.</p>
        <pre class="code" data-testid="payload">
          {JSON.stringify(payload, null, 2)}
        </pre>
      </section>
    </Layout>
  );
}
