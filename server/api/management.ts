// Handlers of spec/management.openapi.yaml: the webhook endpoint, its secrets, test webhooks
// and the delivery activity. The router has authenticated the member token or API key,
// checked webhooks_manage or the member's role, picked the environment (ctx.scope) and
// validated the request against the spec.
import type { operations } from '../../generated/types/management.ts';
import type { Scope } from '../domain/context.ts';
import { rotateCallbackSecret } from '../domain/endpoints/callback-secret.ts';
import { getDelivery, listDeliveries, retryDelivery } from '../domain/deliveries/deliveries.ts';
import { recoverDeliveries } from '../domain/deliveries/recover.ts';
import { isoTime } from '../domain/iso-time.ts';
import { createEndpoint, getEndpoint, listEndpoints, rotateEndpointSecret, sendTestWebhook, updateEndpoint } from '../domain/endpoints/endpoints.ts';
import type { HandlersFor } from '../http/handler-types.ts';
import { presentCallbackSecret, presentDelivery, presentDeliveryDetail, presentEndpoint, presentEndpointWithSecret } from './present/webhooks.ts';

/** Answers that carry a secret must not be cached anywhere. */
const NO_STORE = { 'Cache-Control': 'no-store' } as const;

/** A member's requests default to test, so a live resource's Location names its environment. */
const located = (path: string, scope: Scope): string => (scope.environment === 'live' ? `${path}?environment=live` : path);

export const managementHandlers: HandlersFor<operations> = {
  async createWebhookEndpoint({ body }, { services, scope }) {
    const created = await createEndpoint(services, scope, { url: body.url, signatureScheme: body.signatureScheme, eventTypes: body.eventTypes, maxPerSecond: body.maxPerSecond });
    return {
      status: 201,
      body: presentEndpointWithSecret(created),
      headers: { ...NO_STORE, Location: located(`/v2/webhooks/endpoints/${created.endpoint.id}`, scope) },
    };
  },

  async listWebhookEndpoints(_input, { services, scope }) {
    return { status: 200, body: { data: (await listEndpoints(services, scope)).map(presentEndpoint) } };
  },

  async getWebhookEndpoint({ path }, { services, scope }) {
    return { status: 200, body: presentEndpoint(await getEndpoint(services, scope, path.endpointId)) };
  },

  async updateWebhookEndpoint({ path, body }, { services, scope }) {
    // The schema admits exactly one of the two forms: a change (url, eventTypes, signatureScheme, maxPerSecond, any of them) or the disabling.
    const change = 'active' in body ? { active: false as const } : { url: body.url, signatureScheme: body.signatureScheme, eventTypes: body.eventTypes, maxPerSecond: body.maxPerSecond };
    return { status: 200, body: presentEndpoint(await updateEndpoint(services, scope, path.endpointId, change)) };
  },

  async rotateWebhookSecret({ path }, { services, scope }) {
    return { status: 200, body: presentEndpointWithSecret(await rotateEndpointSecret(services, scope, path.endpointId)), headers: { ...NO_STORE } };
  },

  async sendTestWebhook({ path }, { services, scope }) {
    const view = await sendTestWebhook(services, scope, path.endpointId);
    return { status: 201, body: presentDelivery(view), headers: { Location: located(`/v2/webhooks/deliveries/${view.delivery.id}`, scope) } };
  },

  async listDeliveries({ query }, { services, scope }) {
    // The router filled in the documented default limit (5, the portal's page size).
    const page = await listDeliveries(services, scope, {
      limit: query.limit ?? 5,
      ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
      ...(query.q !== undefined ? { q: query.q } : {}),
      ...(query.endpointId !== undefined ? { endpointId: query.endpointId } : {}),
    });
    return { status: 200, body: { data: page.deliveries.map(presentDelivery), nextCursor: page.nextCursor } };
  },

  async getDelivery({ path }, { services, scope }) {
    return { status: 200, body: presentDeliveryDetail(await getDelivery(services, scope, path.deliveryId)) };
  },

  async retryDelivery({ path }, { services, scope }) {
    return { status: 200, body: presentDelivery(await retryDelivery(services, scope, path.deliveryId)) };
  },

  async recoverDeliveries({ path, body }, { services, scope }) {
    // The router checked both are date-times (RFC 3339).
    const r = await recoverDeliveries(services, scope, path.endpointId, {
      since: Date.parse(body.since),
      until: body.until === undefined ? services.clock.now() : Date.parse(body.until),
      include: body.include ?? 'failed',
      ...(body.missedBy === undefined ? {} : { missedBy: body.missedBy }),
    });
    const at = (ms: number | null): string | null => (ms === null ? null : isoTime(ms));
    return { status: 202, body: { recovered: r.recovered, lastDueAt: at(r.lastDueAt), nextSince: at(r.nextSince) } };
  },

  async rotateCallbackSecret(_input, { services, scope }) {
    return { status: 200, body: presentCallbackSecret(await rotateCallbackSecret(services, scope)), headers: { ...NO_STORE } };
  },
};
