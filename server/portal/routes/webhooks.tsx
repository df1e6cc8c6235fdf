// The Webhooks page and the small JSON route portal.js polls for "Last test".
import type { Hono } from 'hono';
import type { Services } from '../../domain/context.ts';
import { listEndpoints } from '../../domain/endpoints/endpoints.ts';
import type { PortalEnv } from '../env.ts';
import { requireViewer } from '../guard.ts';
import { chromeFor } from '../messages.tsx';
import { page } from '../render.ts';
import { formatTime } from '../views/parts.tsx';
import { deliveryHref, isDone, WebhooksPage } from '../views/webhooks.tsx';
import { loadActivity } from './deliveries.tsx';

export function registerWebhooksPage(portal: Hono<PortalEnv>, services: Services): void {
  portal.get('/webhooks', requireViewer(services), async (c) => {
    const viewer = c.var.viewer;
    const endpoints = await listEndpoints(services, viewer.scope);
    const activity = await loadActivity(services, viewer, { q: '', cursor: null });
    const done = c.req.query('done');
    return page(
      c,
      <WebhooksPage
        chrome={chromeFor(viewer, 'Webhooks')}
        environment={viewer.scope.environment}
        active={endpoints.filter((v) => v.endpoint.active)}
        disabled={endpoints.filter((v) => !v.endpoint.active)}
        activity={activity}
        canManage={viewer.canManage}
        csrf={viewer.session.csrf}
        done={isDone(done) ? done : undefined}
      />,
    );
  });

  // The active endpoint's Last test (or the newest endpoint's, once none is active).
  portal.get('/api/last-test', requireViewer(services), async (c) => {
    const endpoints = await listEndpoints(services, c.var.viewer.scope);
    const view = endpoints.find((v) => v.endpoint.active) ?? endpoints[0];
    const t = view?.lastTest ?? null;
    return c.json({
      lastTest: t && {
        deliveryId: t.deliveryId,
        eventId: t.eventId,
        progress: t.progress,
        at: new Date(t.at).toISOString(),
        atText: formatTime(t.at),
        href: deliveryHref(t.deliveryId),
      },
    });
  });
}
