// The Webhooks page of a tenant environment: its active endpoints (up to MAX_ACTIVE_ENDPOINTS,
// issue 68), each with its event types and manage controls, the newest one's Last test, earlier
// (disabled) endpoints, and the webhook activity of them all.
import type { DeliveryView } from '../../domain/deliveries/deliveries.ts';
import type { EndpointView, TestSummary } from '../../domain/endpoints/endpoints.ts';
import { DEFAULT_DISABLE_AFTER_MS, DISABLE_MIN_FAILURES } from '../../domain/endpoints/health.ts';
import type { DisabledReason } from '../../domain/model.ts';
import { MAX_ACTIVE_ENDPOINTS } from '../../../generated/vocabulary.ts';
import { ActivitySection, activityHref } from './activity.tsx';
import { RateField, rateLabel } from './rate.tsx';
import { SCHEME_LABELS, SchemeField } from './scheme.tsx';
import type { Chrome } from './layout.tsx';
import { CsrfField, Layout } from './layout.tsx';
import { Notice, StateBadge, Time } from './parts.tsx';

export const LAST_TEST_POLL_PATH = '/portal/api/last-test';

export function deliveryHref(deliveryId: string): string {
  return `/portal/webhooks/deliveries/${encodeURIComponent(deliveryId)}`;
}

export function endpointHref(endpointId: string, action: 'edit' | 'disable' | 'rotate' | 'test' | 'scheme' | 'recover'): string {
  return `/portal/webhooks/endpoints/${encodeURIComponent(endpointId)}/${action}`;
}

function LastTest(props: { lastTest: TestSummary | null }) {
  const t = props.lastTest;
  return (
    <div class="last-test" id="last-test" data-last-test data-poll={LAST_TEST_POLL_PATH} data-progress={t?.progress ?? ''} data-testid="last-test">
      <span class="last-test__label">Last test</span>
      {t ? (
        <>
          <StateBadge progress={t.progress} />
          <span class="muted small">
            updated <Time at={t.at} />
          </span>
          <a href={deliveryHref(t.deliveryId)} data-last-test-link class="small">
            View delivery
          </a>
        </>
      ) : (
        <span class="muted">No test webhook sent yet.</span>
      )}
      <span class="visually-hidden" aria-live="polite" data-last-test-live></span>
    </div>
  );
}

/** `newest`: the first card, the one whose Last test the page polls (one live region per page). */
function ActiveEndpoint(props: { view: EndpointView; canManage: boolean; csrf: string; newest: boolean; disabled: readonly EndpointView[] }) {
  const e = props.view.endpoint;
  const titleId = `endpoint-title-${e.id}`;
  return (
    <section class="card" aria-labelledby={titleId} data-testid="endpoint">
      <div class="card__head">
        <h2 id={titleId}>Endpoint</h2>
        <span class="status-dot status-dot--active">
          <span aria-hidden="true">●</span> Active
        </span>
      </div>
      <code class="endpoint-url" data-testid="endpoint-url">
        {e.url}
      </code>
      {e.failingSince === null ? null : (
        <Notice tone="warning" title="Failing" testId="endpoint-failing">
          <p>
            Every attempt since <Time at={e.failingSince} /> failed ({e.consecutiveFailures} in a row). Deliveries are retried; an endpoint that answers 410, or
            keeps failing ({Math.round(DEFAULT_DISABLE_AFTER_MS / 86_400_000)} days by default, and {DISABLE_MIN_FAILURES} attempts), is disabled.
          </p>
        </Notice>
      )}
      <dl class="facts">
        <div>
          <dt>Version</dt>
          <dd data-testid="endpoint-version">{e.version}</dd>
        </div>
        <div>
          <dt>Signature scheme</dt>
          <dd data-testid="endpoint-scheme">{SCHEME_LABELS[e.signatureScheme]}</dd>
        </div>
        <div>
          <dt>Events</dt>
          <dd data-testid="endpoint-event-types">{e.eventTypes === null ? 'Every order event' : e.eventTypes.join(', ')}</dd>
        </div>
        <div>
          <dt>Rate cap</dt>
          <dd data-testid="endpoint-max-per-second">{rateLabel(e.maxPerSecond)}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            <Time at={e.createdAt} />
          </dd>
        </div>
        <div>
          <dt>Last changed</dt>
          <dd>
            <Time at={e.updatedAt} />
          </dd>
        </div>
        <div>
          <dt>Endpoint id</dt>
          <dd class="id">{e.id}</dd>
        </div>
      </dl>
      <p class="small">
        <a href={activityHref({ endpoint: e.id })} data-testid="endpoint-activity">
          Activity of this endpoint
        </a>
      </p>
      {props.canManage ? (
        <div class="actions" data-testid="manage-controls">
          <form method="post" action={endpointHref(e.id, 'test')}>
            <CsrfField token={props.csrf} />
            <button type="submit" class="button button--primary" data-testid="send-test">
              <span aria-hidden="true">➤</span> Send test webhook
            </button>
          </form>
          <a class="button" href={endpointHref(e.id, 'edit')} data-testid="edit-url">
            Edit URL
          </a>
          <a class="button" href={endpointHref(e.id, 'rotate')} data-testid="rotate-secret">
            Rotate secret
          </a>
          <a class="button button--danger-quiet" href={endpointHref(e.id, 'disable')} data-testid="disable">
            Disable
          </a>
        </div>
      ) : null}
      {props.canManage ? (
        <form method="post" action={endpointHref(e.id, 'scheme')} class="form" data-testid="scheme-form">
          <CsrfField token={props.csrf} />
          <input type="hidden" name="version" value={String(e.version)} />
          <SchemeField value={e.signatureScheme} />
          <RateField value={e.maxPerSecond} />
          <button type="submit" class="button" data-testid="change-scheme">
            Save scheme and rate cap
          </button>
        </form>
      ) : null}
      {props.canManage ? <RecoverForm endpointId={e.id} csrf={props.csrf} /> : null}
      {props.canManage ? <RecoverMissedForm endpointId={e.id} csrf={props.csrf} disabled={props.disabled} /> : null}
      <p class="muted small">
        The signing secret is shown only once, when the endpoint is created and at each rotation. No copy of it is available here; if it is lost,
        Rotate secret issues a new one.
      </p>
      {props.newest ? <LastTest lastTest={props.view.lastTest} /> : null}
    </section>
  );
}

function NoEndpoint(props: { canManage: boolean; environment: string }) {
  return (
    <section class="card" aria-labelledby="endpoint-title" data-testid="no-endpoint">
      <div class="card__head">
        <h2 id="endpoint-title">No active endpoint</h2>
        <span class="status-dot status-dot--inactive">
          <span aria-hidden="true">○</span> Not receiving
        </span>
      </div>
      <p>
        Without an active endpoint, orders of the {props.environment} environment are still created but no webhook delivery is prepared. Their
        events stay readable through <code>GET /v2/events</code>.
      </p>
      {props.canManage ? (
        <a class="button button--primary" href="/portal/webhooks/new" data-testid="add-webhook">
          <span aria-hidden="true">+</span> Add webhook
        </a>
      ) : (
        <p class="muted small">An administrator or developer can add one.</p>
      )}
    </section>
  );
}

/** Why an endpoint was disabled, as the portal says it (issue 69); after a disable the replacement recovers what it missed (missedBy). */
const DISABLED_REASON: Readonly<Record<DisabledReason, string>> = {
  requested: 'disabled by a member',
  gone: 'disabled by the service: it answered 410 Gone. Create a new endpoint, then recover with missedBy (see the docs)',
  failing: 'disabled by the service: every attempt failed. Create a new endpoint, then recover with missedBy (see the docs)',
};

function EarlierEndpoints(props: { views: EndpointView[] }) {
  if (props.views.length === 0) return null;
  return (
    <section class="card" aria-labelledby="earlier-title">
      <div class="card__head">
        <h2 id="earlier-title">Disabled endpoints</h2>
        <span class="muted small">Kept with their activity; a disabled endpoint cannot be re-enabled.</span>
      </div>
      <ul class="old-endpoints">
        {props.views.map(({ endpoint: e }) => (
          <li data-testid="disabled-endpoint">
            <span class="badge badge--disabled">
              <span class="badge__symbol" aria-hidden="true">
                ⊘
              </span>
              <span class="badge__label">Disabled</span>
            </span>
            <code>{e.url}</code>
            <span class="muted small" data-testid="disabled-reason">
              v{e.version} · disabled <Time at={e.disabledAt} /> · {DISABLED_REASON[e.disabledReason ?? 'requested']}
            </span>
            <a class="small" href={activityHref({ endpoint: e.id })}>
              Activity
            </a>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The periods the portal's Recover button offers, in hours (the API takes any window). */
export const RECOVER_PERIODS: Readonly<Record<string, string>> = { '24': 'the last 24 hours', '72': 'the last 3 days', '168': 'the last 7 days', '720': 'the last 30 days' };

/** Sends the endpoint's failed deliveries of a recent period again (POST …/recover). */
function RecoverForm(props: { endpointId: string; csrf: string }) {
  return (
    <form method="post" action={endpointHref(props.endpointId, 'recover')} class="actions" data-testid="recover-form">
      <CsrfField token={props.csrf} />
      <label>
        Failed deliveries of{' '}
        <select name="hours" data-testid="recover-hours">
          {Object.entries(RECOVER_PERIODS).map(([hours, label]) => (
            <option value={hours}>{label}</option>
          ))}
        </select>
      </label>
      <button type="submit" class="button" data-testid="recover">
        Recover
      </button>
    </form>
  );
}

/**
 * Nothing lost (issue 69): every event a disabled endpoint missed, sent to this one with its
 * original id (the same proof-gated Recover route, with missedBy). Offered for endpoints the
 * service disabled; a member's own disable is offered too (the merchant knows why).
 */
function RecoverMissedForm(props: { endpointId: string; csrf: string; disabled: readonly EndpointView[] }) {
  if (props.disabled.length === 0) return null;
  return (
    <form method="post" action={endpointHref(props.endpointId, 'recover')} class="actions" data-testid="recover-missed-form">
      <CsrfField token={props.csrf} />
      <label>
        Every event missed by{' '}
        <select name="missedBy" data-testid="recover-missed-by">
          {props.disabled.map(({ endpoint: d }) => (
            <option value={d.id}>
              {d.url} ({d.disabledReason ?? 'requested'})
            </option>
          ))}
        </select>
      </label>
      <button type="submit" class="button" data-testid="recover-missed">
        Recover to this endpoint
      </button>
    </form>
  );
}

export type Done = 'test-sent' | 'url-changed' | 'scheme-changed' | 'disabled' | 'recovered';

const DONE: Record<Done, { title: string; detail: string }> = {
  'test-sent': {
    title: 'Test webhook queued',
    detail: 'A webhook.test event is on its way through the same signed path as order events. Last test updates here as it is sent.',
  },
  'url-changed': {
    title: 'URL changed',
    detail: 'The endpoint has a new version. Pending deliveries of the previous version are now disabled; failed ones can be retried to the new URL.',
  },
  'scheme-changed': {
    title: 'Signature scheme and rate cap saved',
    detail: 'The version stays; pending deliveries go on, with the headers of the scheme and paced by the rate cap (or not, with no cap) from their next attempt.',
  },
  recovered: {
    title: 'Recovery queued',
    detail: 'The failed deliveries of that period go again, each in a new cycle with its event id, paced so your receiver is not flooded. The activity shows them as they are sent.',
  },
  disabled: {
    title: 'Endpoint disabled',
    detail: 'Its pending deliveries are now disabled and no new deliveries are prepared. Its activity stays below.',
  },
};

export function isDone(value: string | undefined): value is Done {
  return value !== undefined && value in DONE;
}

export function WebhooksPage(props: {
  chrome: Chrome;
  environment: 'test' | 'live';
  /** Newest first. */
  active: EndpointView[];
  disabled: EndpointView[];
  activity: { deliveries: DeliveryView[]; nextCursor: string | null };
  canManage: boolean;
  csrf: string;
  done?: Done;
}) {
  const done = props.done ? DONE[props.done] : null;
  return (
    <Layout {...props.chrome}>
      <div class="page-head">
        <div>
          <h1>
            Webhooks
            <span class={`env-tag env-tag--${props.environment}`} data-testid="environment">
              {props.environment}
            </span>
            {props.canManage ? null : (
              <span class="env-tag env-tag--readonly" data-testid="read-only-tag">
                read-only
              </span>
            )}
          </h1>
          <p class="lead">
            Order events of the {props.environment} environment are sent to each endpoint whose events include them (up to{' '}
            {MAX_ACTIVE_ENDPOINTS} endpoints), each signed with its own secret. The other environment has its own endpoints and secrets.
          </p>
        </div>
      </div>
      {done ? (
        <Notice tone="success" title={done.title} testId="done">
          <p>{done.detail}</p>
        </Notice>
      ) : null}
      {props.active.length > 0 ? (
        props.active.map((view, i) => <ActiveEndpoint view={view} canManage={props.canManage} csrf={props.csrf} newest={i === 0} disabled={props.disabled} />)
      ) : (
        <NoEndpoint canManage={props.canManage} environment={props.environment} />
      )}
      {props.canManage && props.active.length > 0 && props.active.length < MAX_ACTIVE_ENDPOINTS ? (
        <p class="actions">
          <a class="button" href="/portal/webhooks/new" data-testid="add-webhook">
            <span aria-hidden="true">+</span> Add another webhook
          </a>
        </p>
      ) : null}
      <ActivitySection deliveries={props.activity.deliveries} nextCursor={props.activity.nextCursor} q="" />
      <EarlierEndpoints views={props.disabled} />
    </Layout>
  );
}
