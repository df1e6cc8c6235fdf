// For the middleware tests: a real Hono app with the service's request id and its one error
// handler, the middleware under test on one route, and a handler that echoes what the
// middleware put in the context. Services are real (a fresh store from server/testing/store.ts).
import { randomBytes } from 'node:crypto';
import { Hono, type MiddlewareHandler } from 'hono';
import { pino } from 'pino';
import type { Principal } from '../../domain/auth.ts';
import { systemClock } from '../../domain/clock.ts';
import type { Services } from '../../domain/context.ts';
import { createSecretBox } from '../../domain/secrets.ts';
import { createDestinationPolicy } from '../../destination/policy.ts';
import { openTestStore } from '../../testing/store.ts';
import type { AppEnv } from '../app-env.ts';
import { problemErrorHandler } from '../errors.ts';
import { requestId } from './request-id.ts';

export const silentLog = pino({ level: 'silent' });

/** POST and GET /op/:id through `chain`; the answer echoes principal, body and request. */
export function appWith(...chain: Array<MiddlewareHandler<AppEnv>>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', requestId({ newId: () => 'req_test' }));
  app.on(['GET', 'POST'], ['/op/:id'], ...chain, (c) =>
    c.json({ principal: c.get('principal') ?? null, body: c.get('body') ?? null, request: c.get('request') ?? null }),
  );
  app.onError(problemErrorHandler(silentLog));
  return app;
}

/** Sets `principal` as authenticate would have. */
export function asPrincipal(p: Partial<Principal> = {}): MiddlewareHandler<AppEnv> {
  const principal = {
    kind: 'api_key',
    keyId: 'key_test',
    permissions: new Set(['payouts']),
    tenantId: 'ten_test',
    environmentId: 'env_test',
    environment: 'test',
    ...p,
  } as Principal;
  return async (c, next) => {
    c.set('principal', principal);
    await next();
  };
}

export async function openTestServices(): Promise<Services & { close(): Promise<void> }> {
  const store = await openTestStore();
  const services: Services = {
    store,
    clock: systemClock,
    secrets: createSecretBox(randomBytes(32)),
    destinations: createDestinationPolicy({ allowInsecure: true, nodeEnv: 'test' }),
    log: silentLog,
  };
  return { ...services, close: () => store.close() };
}

/** The problem type slug of an answer (its `type` without the base URI). */
export async function problemSlug(res: Response): Promise<string> {
  const body = (await res.json()) as { type?: string };
  return (body.type ?? '').split('/').pop() ?? '';
}
