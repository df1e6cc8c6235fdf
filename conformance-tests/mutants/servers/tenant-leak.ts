// Mutant 2: leaks one tenant's data to another. A response cache for GET requests is keyed by
// the URL alone, not by the credentials: once tenant A has read
// GET /v2/orders/{orderId} or GET /transactions/users?userId=..&transactionId=.., tenant B
// asking for the same URL gets A's answer.
// Caught by the api target's `api.rules.isolation.*` checks (and, as the cache also serves
// stale reads, by rules that read a changed resource back).
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import { wrapApp } from './wrap.ts';

interface Cached {
  status: number;
  headers: Headers;
  body: ArrayBuffer;
}

export function build(services: Services, config: Config): BuiltApp {
  const cache = new Map<string, Cached>();
  return wrapApp(buildApp(services, config), () => async (c, next) => {
    const key = c.req.method === 'GET' ? c.req.url : null; // the defect: no credential in the key
    const hit = key === null ? undefined : cache.get(key);
    if (hit) {
      c.res = new Response(hit.body.slice(0), { status: hit.status, headers: hit.headers });
      return;
    }
    await next();
    // Like any response cache, it leaves a stream alone (buffering one would hang it, and every
    // stream check would wait out the suite's timeout instead of showing the leak).
    if (key !== null && c.res.status === 200 && !c.res.headers.get('content-type')?.startsWith('text/event-stream')) {
      const body = await c.res.clone().arrayBuffer();
      cache.set(key, { status: c.res.status, headers: new Headers(c.res.headers), body });
    }
  });
}
