// Webhook activity pages: search and older pages, one delivery's detail, and its manual retry
// (behind proofGate, like Recover).
// Every read goes through the same domain functions as GET /v2/webhooks/deliveries, scoped to
// the session's tenant environment: another tenant's delivery id is simply not found.
import type { Hono } from 'hono';
import type { Services } from '../../domain/context.ts';
import { isAppError } from '../../domain/errors.ts';
import { getDelivery, listDeliveries, retryDelivery, type DeliveryPageView } from '../../domain/deliveries/deliveries.ts';
import type { PortalEnv } from '../env.ts';
import { requireViewer } from '../guard.ts';
import { chromeFor } from '../messages.tsx';
import { page } from '../render.ts';
import { gated } from '../proof.tsx';
import type { Viewer } from '../session.ts';
import { ACTIVITY_PAGE_SIZE, ActivitySection } from '../views/activity.tsx';
import { Layout } from '../views/layout.tsx';
import { Breadcrumbs } from '../views/parts.tsx';
import { DeliveryPage, type DeliveryPageProps } from '../views/delivery.tsx';

const MAX_QUERY = 200;

/** The newest page of activity (or the one after `cursor`); a stale cursor falls back to the newest. */
export async function loadActivity(
  services: Services,
  viewer: Viewer,
  opts: { q: string; cursor: string | null; endpoint?: string | null },
): Promise<DeliveryPageView & { error?: string }> {
  const q = opts.q.trim().slice(0, MAX_QUERY);
  const query = { limit: ACTIVITY_PAGE_SIZE, ...(q ? { q } : {}), ...(opts.endpoint ? { endpointId: opts.endpoint } : {}) };
  try {
    return await listDeliveries(services, viewer.scope, { ...query, ...(opts.cursor ? { cursor: opts.cursor } : {}) });
  } catch (e) {
    if (!opts.cursor || !isAppError(e) || e.slug !== 'validation-failed') throw e;
    const newest = await listDeliveries(services, viewer.scope, query);
    return { ...newest, error: 'That page link is no longer valid; showing the newest deliveries instead.' };
  }
}

export function registerDeliveryRoutes(portal: Hono<PortalEnv>, services: Services): void {
  portal.get('/webhooks/activity', requireViewer(services), async (c) => {
    const viewer = c.var.viewer;
    const q = (c.req.query('q') ?? '').trim().slice(0, MAX_QUERY);
    const cursor = c.req.query('cursor') ?? null;
    const endpoint = c.req.query('endpoint')?.trim().slice(0, MAX_QUERY) || null;
    const activity = await loadActivity(services, viewer, { q, cursor, endpoint });
    return page(
      c,
      <Layout {...chromeFor(viewer, q ? `Search: ${q}` : 'Webhook activity')}>
        <Breadcrumbs items={[{ href: '/portal/webhooks', label: 'Webhooks' }, { label: 'Activity' }]} />
        <ActivitySection deliveries={activity.deliveries} nextCursor={activity.nextCursor} q={q} olderPage={cursor !== null} error={activity.error} endpoint={endpoint ?? undefined} />
      </Layout>,
    );
  });

  const detail = async (viewer: Viewer, deliveryId: string, notice?: DeliveryPageProps['notice']) => {
    const view = await getDelivery(services, viewer.scope, deliveryId);
    return (
      <DeliveryPage
        chrome={chromeFor(viewer, `Delivery ${view.eventType}`)}
        view={view}
        canManage={viewer.canManage}
        csrf={viewer.session.csrf}
        notice={notice}
      />
    );
  };

  portal.get('/webhooks/deliveries/:deliveryId', requireViewer(services), async (c) => {
    const viewer = c.var.viewer;
    const notice: DeliveryPageProps['notice'] =
      c.req.query('retried') === '1'
        ? { tone: 'success', title: 'Retry queued', detail: 'A new cycle of up to ten attempts started with the original event id and payload.' }
        : undefined;
    return page(c, await detail(viewer, c.req.param('deliveryId'), notice));
  });

  // Gated as Recover is (proof-gated.ts): a retry of one delivery re-sends its event as Recover re-sends many.
  gated(portal, services, '/webhooks/deliveries/:deliveryId/retry', async (c) => {
    const viewer = c.var.viewer;
    const deliveryId = c.req.param('deliveryId');
    try {
      await retryDelivery(services, viewer.scope, deliveryId);
    } catch (e) {
      if (!isAppError(e) || e.slug !== 'delivery-not-retryable') throw e;
      return page(c, await detail(viewer, deliveryId, { tone: 'error', title: 'Not retried', detail: e.detail }), 409);
    }
    return c.redirect(`/portal/webhooks/deliveries/${encodeURIComponent(deliveryId)}?retried=1`, 303);
  });
}
