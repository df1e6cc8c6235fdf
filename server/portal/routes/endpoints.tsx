// Managing the endpoint: add, edit URL, rotate secret, disable, send a test. Every action is a
// POST behind the session, CSRF and role checks (guard.ts) and calls the same domain function as
// the management API; every change of where or how events are delivered is registered by
// `gated` (proof.tsx) from its entry in proof-gated.ts, behind its guards and proofGate. Changes
// that disable pending deliveries go through a confirmation page that carries the endpoint
// version it was shown for, so a stale or replayed form (a reload of the reveal page, a second
// tab) changes nothing.
import type { Context, Hono } from 'hono';
import { WEBHOOK_URL_MAX_LENGTH } from '../../../generated/vocabulary.ts';
import type { Services } from '../../domain/context.ts';
import { checkDestination } from '../../domain/destination-check.ts';
import { isAppError, type AppError } from '../../domain/errors.ts';
import { createEndpoint, getEndpoint, listEndpoints, rotateEndpointSecret, sendTestWebhook, updateEndpoint } from '../../domain/endpoints/endpoints.ts';
import type { EndpointRecord, SignatureScheme } from '../../domain/model.ts';
import { webhookSignatureSchemeValues } from '../../../generated/types/management.ts';
import type { PortalEnv } from '../env.ts';
import { requireManage, requireViewer } from '../guard.ts';
import { chromeFor, messageResponse } from '../messages.tsx';
import { formFields, page } from '../render.ts';
import { gated, passkeyOffered, proofIsFresh } from '../proof.tsx';
import type { Viewer } from '../session.ts';
import { ConfirmPage, EditUrlPage, NewEndpointPage, typesOf, type ConfirmKind, type UrlRefusal } from '../views/endpoint-forms.tsx';
import { RATE_INVALID, rateOf } from '../views/rate.tsx';
import { SecretPage } from '../views/secret.tsx';
import { RECOVER_PERIODS } from '../views/webhooks.tsx';
import { recoverDeliveries } from '../../domain/deliveries/recover.ts';

/** The contract's bound on a webhook URL (WebhookUrl.maxLength). */
const MAX_URL_LENGTH = WEBHOOK_URL_MAX_LENGTH;

type PortalContext = Context<PortalEnv>;

/** A submitted scheme, when it is one of the contract's values. */
const schemeOf = (value: string | undefined): SignatureScheme | undefined => webhookSignatureSchemeValues.find((v) => v === value);

const refusalOf = (e: AppError): UrlRefusal => ({ rule: e.extras.rule ?? null, detail: e.detail });
const isRefusedUrl = (e: unknown): e is AppError => isAppError(e) && e.slug === 'destination-not-allowed';

function tooLong(url: string): UrlRefusal | null {
  return url.length > MAX_URL_LENGTH ? { rule: null, detail: `The URL has ${url.length} characters; at most ${MAX_URL_LENGTH} are allowed.` } : null;
}

/** No store, no history: the one page that carries a secret must not outlive its first display. */
function noStore(c: PortalContext): void {
  c.header('Cache-Control', 'no-store');
  c.header('Pragma', 'no-cache');
}

export function registerEndpointRoutes(portal: Hono<PortalEnv>, services: Services): void {
  const manage = [requireViewer(services), requireManage] as const;

  /** The endpoint of the session's environment, which must still be active (else a 409 page). */
  async function activeEndpoint(c: PortalContext): Promise<EndpointRecord | Response> {
    const viewer = c.var.viewer;
    const { endpoint } = await getEndpoint(services, viewer.scope, c.req.param('endpointId') ?? '');
    if (endpoint.active) return endpoint;
    return messageResponse(
      c,
      viewer,
      { heading: 'Endpoint disabled', detail: 'This endpoint is disabled and takes no more changes. Add a new webhook instead.' },
      409,
    );
  }

  /** A form shown for another version of the endpoint changes nothing. */
  function staleForm(c: PortalContext, viewer: Viewer, endpoint: EndpointRecord, submitted: string | undefined): Promise<Response> | null {
    if (submitted === String(endpoint.version)) return null;
    return messageResponse(
      c,
      viewer,
      {
        heading: 'The endpoint has changed',
        detail: `This form was shown for another version of the endpoint; it is now at version ${endpoint.version}. Nothing was changed: review the endpoint and try again.`,
      },
      409,
    );
  }

  // ---- add -------------------------------------------------------------------------------

  portal.get('/webhooks/new', ...manage, (c) => {
    const viewer = c.var.viewer;
    return page(c, <NewEndpointPage chrome={chromeFor(viewer, 'Add webhook')} csrf={viewer.session.csrf} environment={viewer.scope.environment} />);
  });

  gated(portal, services, '/webhooks/endpoints', async (c) => {
    const viewer = c.var.viewer;
    const fields = await formFields(c);
    const url = (fields.url ?? '').trim();
    const signatureScheme = schemeOf(fields.signatureScheme) ?? 'service-signature';
    const maxPerSecond = rateOf(fields.maxPerSecond);
    const form = (refusal: UrlRefusal, status: 400 | 409) =>
      page(
        c,
        <NewEndpointPage chrome={chromeFor(viewer, 'Add webhook')} csrf={viewer.session.csrf} environment={viewer.scope.environment} url={url} refusal={refusal} />,
        status,
      );
    const long = tooLong(url);
    if (long) return form(long, 400);
    if (maxPerSecond === 'invalid') return form({ rule: null, detail: RATE_INVALID }, 400);
    try {
      const eventTypes = typesOf(fields);
      const created = await createEndpoint(services, viewer.scope, { url, signatureScheme, ...(eventTypes ? { eventTypes } : {}), ...(maxPerSecond !== undefined ? { maxPerSecond } : {}) });
      noStore(c);
      return page(c, <SecretPage chrome={chromeFor(viewer, 'Webhook added')} kind="created" endpoint={created.endpoint} secret={created.secret} />);
    } catch (e) {
      if (isRefusedUrl(e)) return form(refusalOf(e), 400);
      if (isAppError(e) && (e.slug === 'endpoint-exists' || e.slug === 'endpoint-limit-reached')) return form({ rule: null, detail: e.detail }, 409);
      throw e;
    }
  });

  // ---- edit URL ----------------------------------------------------------------------------

  portal.get('/webhooks/endpoints/:endpointId/edit', ...manage, async (c) => {
    const viewer = c.var.viewer;
    const endpoint = await activeEndpoint(c);
    if (endpoint instanceof Response) return endpoint;
    return page(c, <EditUrlPage chrome={chromeFor(viewer, 'Edit URL')} csrf={viewer.session.csrf} endpoint={endpoint} />);
  });

  gated(portal, services, '/webhooks/endpoints/:endpointId/edit', async (c) => {
    const viewer = c.var.viewer;
    const endpoint = await activeEndpoint(c);
    if (endpoint instanceof Response) return endpoint;
    const fields = await formFields(c);
    const stale = staleForm(c, viewer, endpoint, fields.version);
    if (stale) return stale;
    const url = (fields.url ?? '').trim();
    const form = (refusal: UrlRefusal) =>
      page(c, <EditUrlPage chrome={chromeFor(viewer, 'Edit URL')} csrf={viewer.session.csrf} endpoint={endpoint} url={url} refusal={refusal} />, 400);
    const long = tooLong(url);
    if (long) return form(long);
    if (url === endpoint.url) return form({ rule: null, detail: 'This is already the endpoint URL; nothing to change.' });
    try {
      if (fields.confirm !== 'yes') {
        // Refuse a bad URL before asking for confirmation; the domain checks it again on save.
        checkDestination(services, url, 'url');
        return page(
          c,
          <ConfirmPage chrome={chromeFor(viewer, 'Change URL')} csrf={viewer.session.csrf} kind="edit" endpoint={endpoint} newUrl={url} reverify={null} />,
        );
      }
      await updateEndpoint(services, viewer.scope, endpoint.id, { url });
    } catch (e) {
      if (isRefusedUrl(e)) return form(refusalOf(e));
      throw e;
    }
    return c.redirect('/portal/webhooks?done=url-changed', 303);
  });

  // ---- signature scheme: no confirmation, nothing is disabled (the version stays) -----------

  gated(portal, services, '/webhooks/endpoints/:endpointId/scheme', async (c) => {
    const viewer = c.var.viewer;
    const endpoint = await activeEndpoint(c);
    if (endpoint instanceof Response) return endpoint;
    const fields = await formFields(c);
    const stale = staleForm(c, viewer, endpoint, fields.version);
    if (stale) return stale;
    const signatureScheme = schemeOf(fields.signatureScheme);
    if (signatureScheme === undefined) {
      return messageResponse(c, viewer, { heading: 'Unknown signature scheme', detail: `Choose one of ${webhookSignatureSchemeValues.join(', ')}. Nothing was changed.` }, 400);
    }
    const maxPerSecond = rateOf(fields.maxPerSecond);
    if (maxPerSecond === 'invalid') return messageResponse(c, viewer, { heading: 'Rate cap out of range', detail: `${RATE_INVALID} Nothing was changed.` }, 400);
    // The field shows the current cap, so an empty one asks for none (null removes it); a post
    // without the field keeps the cap.
    const cap = fields.maxPerSecond === undefined ? {} : { maxPerSecond: maxPerSecond ?? null };
    await updateEndpoint(services, viewer.scope, endpoint.id, { signatureScheme, ...cap });
    return c.redirect('/portal/webhooks?done=scheme-changed', 303);
  });

  // ---- disable and rotate: confirmation with re-verification ---------------------------------

  /** The confirmation page; when the last proof is stale it carries the proof fields, so one post does both. */
  const confirmPage = async (c: PortalContext, kind: ConfirmKind, endpoint: EndpointRecord) => {
    const viewer = c.var.viewer;
    const { reverifyAfterMs } = c.var.portal.settings;
    const reverify = proofIsFresh(c, services) ? null : { passkey: await passkeyOffered(c, services) };
    const title = kind === 'disable' ? 'Disable endpoint' : 'Rotate secret';
    return page(
      c,
      <ConfirmPage
        chrome={chromeFor(viewer, title)}
        csrf={viewer.session.csrf}
        kind={kind}
        endpoint={endpoint}
        reverify={reverify}
        reverifyAfterMs={reverifyAfterMs}
      />,
    );
  };

  for (const kind of ['disable', 'rotate'] as const) {
    portal.get(`/webhooks/endpoints/:endpointId/${kind}`, ...manage, async (c) => {
      const endpoint = await activeEndpoint(c);
      if (endpoint instanceof Response) return endpoint;
      return confirmPage(c, kind, endpoint);
    });
  }

  /** Runs the checks every confirmed disable/rotate needs (the proof was taken by the gate); answers a response when one fails. */
  async function confirmed(c: PortalContext, kind: ConfirmKind, endpoint: EndpointRecord): Promise<Response | null> {
    const fields = await formFields(c);
    const stale = staleForm(c, c.var.viewer, endpoint, fields.version);
    if (stale) return stale;
    if (fields.confirm !== 'yes') return confirmPage(c, kind, endpoint);
    return null;
  }

  gated(portal, services, '/webhooks/endpoints/:endpointId/disable', async (c) => {
    const endpoint = await activeEndpoint(c);
    if (endpoint instanceof Response) return endpoint;
    const stop = await confirmed(c, 'disable', endpoint);
    if (stop) return stop;
    await updateEndpoint(services, c.var.viewer.scope, endpoint.id, { active: false });
    return c.redirect('/portal/webhooks?done=disabled', 303);
  });

  gated(portal, services, '/webhooks/endpoints/:endpointId/rotate', async (c) => {
    const endpoint = await activeEndpoint(c);
    if (endpoint instanceof Response) return endpoint;
    const stop = await confirmed(c, 'rotate', endpoint);
    if (stop) return stop;
    const viewer = c.var.viewer;
    const rotated = await rotateEndpointSecret(services, viewer.scope, endpoint.id);
    noStore(c);
    return page(c, <SecretPage chrome={chromeFor(viewer, 'Secret rotated')} kind="rotated" endpoint={rotated.endpoint} secret={rotated.secret} />);
  });

  // ---- test --------------------------------------------------------------------------------

  portal.post('/webhooks/endpoints/:endpointId/test', ...manage, async (c) => {
    const endpoint = await activeEndpoint(c);
    if (endpoint instanceof Response) return endpoint;
    await sendTestWebhook(services, c.var.viewer.scope, endpoint.id);
    return c.redirect('/portal/webhooks?done=test-sent#last-test', 303);
  });

  // ---- recover ---------------------------------------------------------------------------

  gated(portal, services, '/webhooks/endpoints/:endpointId/recover', async (c) => {
    const endpoint = await activeEndpoint(c);
    if (endpoint instanceof Response) return endpoint;
    const fields = await formFields(c);
    if (fields.missedBy !== undefined) {
      // Nothing lost (issue 69): everything the disabled endpoint missed since it was created.
      const missed = (await listEndpoints(services, c.var.viewer.scope)).find((v) => v.endpoint.id === fields.missedBy && !v.endpoint.active);
      if (!missed) return messageResponse(c, c.var.viewer, { heading: 'Unknown endpoint', detail: 'Choose one of the disabled endpoints offered. Nothing was changed.' }, 400);
      const now = services.clock.now();
      await recoverDeliveries(services, c.var.viewer.scope, endpoint.id, { since: missed.endpoint.createdAt, until: now + 1, include: 'failed', missedBy: missed.endpoint.id });
      return c.redirect('/portal/webhooks?done=recovered#activity', 303);
    }
    const hours = fields.hours ?? '';
    // Own keys only: `in` would take `constructor` and the other names every object inherits.
    if (!Object.hasOwn(RECOVER_PERIODS, hours)) {
      return messageResponse(c, c.var.viewer, { heading: 'Unknown period', detail: 'Choose one of the periods offered. Nothing was changed.' }, 400);
    }
    const now = services.clock.now();
    await recoverDeliveries(services, c.var.viewer.scope, endpoint.id, { since: now - Number(hours) * 3_600_000, until: now + 1, include: 'failed' });
    return c.redirect('/portal/webhooks?done=recovered#activity', 303);
  });
}
