// Webhook activity: the newest deliveries first, a search for an exact order id, order
// reference or event id, and "Load 5 more" (a plain link with the cursor; portal.js appends
// the rows in place when it runs).
import type { DeliveryView } from '../../domain/deliveries/deliveries.ts';
import { Answer, KIND_LABEL, Notice, shortId, StateBadge, Time } from './parts.tsx';

export const ACTIVITY_PAGE_SIZE = 5;

/** `endpoint`: one endpoint's activity (issue 68); the environment's when left out. */
export function activityHref(opts: { q?: string | null; cursor?: string | null; endpoint?: string | null }): string {
  const params = new URLSearchParams();
  if (opts.endpoint) params.set('endpoint', opts.endpoint);
  if (opts.q) params.set('q', opts.q);
  if (opts.cursor) params.set('cursor', opts.cursor);
  const query = params.toString();
  return `/portal/webhooks/activity${query ? `?${query}` : ''}`;
}

function DeliveryRow(props: { view: DeliveryView }) {
  const { delivery: d, eventType, progress, lastAttempt } = props.view;
  const href = `/portal/webhooks/deliveries/${encodeURIComponent(d.id)}`;
  return (
    <tr data-delivery={d.id} data-progress={progress}>
      <td class="stack__lead">
        <StateBadge progress={progress} />
      </td>
      <td data-label="Event">
        <a href={href} class="event-type">
          {eventType}
        </a>
        <span class="sub id" title={d.eventId}>
          {shortId(d.eventId, 16)}
        </span>
      </td>
      <td data-label="Order">
        {d.merchantReference || d.orderId ? (
          <>
            {d.merchantReference ?? '—'}
            {d.orderId ? (
              <span class="sub id" title={d.orderId}>
                {d.orderId}
              </span>
            ) : null}
          </>
        ) : d.transactionId ? (
          <>
            <span class="muted">Payout</span>
            <span class="sub id">{d.transactionId}</span>
          </>
        ) : (
          <span class="muted">{KIND_LABEL[d.kind]}</span>
        )}
      </td>
      <td data-label="Attempts" class="num">
        {d.attemptCount}/10{d.cycle > 1 ? <span class="sub">cycle {d.cycle}</span> : null}
      </td>
      <td data-label="Last answer">{lastAttempt ? <Answer attempt={lastAttempt} /> : <span class="muted">No attempt yet</span>}</td>
      <td data-label="Created" class="nowrap">
        <Time at={d.createdAt} />
      </td>
    </tr>
  );
}

export function ActivityTable(props: { deliveries: DeliveryView[]; empty: string }) {
  return (
    <div class="table-wrap">
      <table class="activity stack">
        <thead>
          <tr>
            <th scope="col">State</th>
            <th scope="col">Event</th>
            <th scope="col">Order</th>
            <th scope="col" class="num">
              Attempts
            </th>
            <th scope="col">Last answer</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody id="activity-rows">
          {props.deliveries.length === 0 ? (
            <tr>
              <td colspan={6} class="empty" data-testid="activity-empty">
                {props.empty}
              </td>
            </tr>
          ) : (
            props.deliveries.map((view) => <DeliveryRow view={view} />)
          )}
        </tbody>
      </table>
    </div>
  );
}

export function SearchForm(props: { q: string; endpoint?: string | undefined }) {
  return (
    <form method="get" action="/portal/webhooks/activity" class="search" role="search">
      {props.endpoint ? <input type="hidden" name="endpoint" value={props.endpoint} /> : null}
      <label for="activity-q" class="visually-hidden">
        Search deliveries
      </label>
      <input
        id="activity-q"
        type="search"
        name="q"
        value={props.q}
        maxlength={200}
        placeholder="Exact order id, order reference or event id"
        autocomplete="off"
        spellcheck={false}
      />
      <button type="submit" class="button">
        Search
      </button>
      {props.q ? (
        <a class="button button--quiet" href="/portal/webhooks#activity">
          Clear
        </a>
      ) : null}
    </form>
  );
}

export function ActivitySection(props: {
  deliveries: DeliveryView[];
  nextCursor: string | null;
  q: string;
  /** Set when this page shows older deliveries (no-JS "Load 5 more"). */
  olderPage?: boolean;
  error?: string;
  endpointDisabledNote?: boolean;
  /** One endpoint's activity; the environment's when left out. */
  endpoint?: string | undefined;
}) {
  const empty = props.q
    ? `No delivery matches “${props.q}”. Search takes an exact order id, order reference or event id.`
    : props.olderPage
      ? 'No older deliveries.'
      : 'No deliveries yet. Send a test webhook, or create an order while an endpoint is active.';
  return (
    <section class="card" id="activity" aria-labelledby="activity-title">
      <div class="card__head">
        <h2 id="activity-title">{props.endpoint ? 'Endpoint activity' : 'Webhook activity'}</h2>
        <span class="muted small">
          {props.endpoint ? (
            <span data-testid="activity-endpoint">
              Newest first · endpoint <code>{props.endpoint}</code>
            </span>
          ) : (
            'Newest first · order events, test webhooks and payout callbacks of every endpoint'
          )}
        </span>
      </div>
      <SearchForm q={props.q} endpoint={props.endpoint} />
      {props.error ? (
        <Notice tone="warning" testId="activity-error">
          <p>{props.error}</p>
        </Notice>
      ) : null}
      {props.q ? (
        <p class="small muted" data-testid="search-summary">
          Deliveries matching <strong>{props.q}</strong>
        </p>
      ) : null}
      {props.olderPage ? <p class="small muted">Older deliveries</p> : null}
      <ActivityTable deliveries={props.deliveries} empty={empty} />
      <p id="activity-status" class="visually-hidden" aria-live="polite"></p>
      <div class="more">
        {props.nextCursor ? (
          <a class="button" href={activityHref({ q: props.q, cursor: props.nextCursor, endpoint: props.endpoint ?? null })} data-load-more data-testid="load-more">
            Load 5 more
          </a>
        ) : props.deliveries.length > 0 ? (
          <span class="muted small">No older deliveries.</span>
        ) : null}
        {props.olderPage || props.q ? (
          <a class="button button--quiet" href="/portal/webhooks#activity">
            Back to newest
          </a>
        ) : null}
      </div>
      <p class="legend" aria-label="Delivery states">
        <span>
          <StateBadge progress="queued" /> / <StateBadge progress="sending" /> / <StateBadge progress="retrying" /> pending
        </span>
        <span>
          <StateBadge progress="delivered" /> 2xx received
        </span>
        <span>
          <StateBadge progress="failed" /> ten attempts failed
        </span>
        <span>
          <StateBadge progress="disabled" /> endpoint changed before delivery
        </span>
      </p>
    </section>
  );
}
