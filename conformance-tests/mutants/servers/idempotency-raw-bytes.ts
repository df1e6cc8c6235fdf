// Mutant: POST /v2/orders compares the bodies of a repeated Idempotency-Key byte for byte: the
// same order sent with its keys in another order or other spacing is refused with 422
// idempotency-key-reused, where the contract compares them as JSON and replays the first answer.
// Caught by the api target's `api.rules.order-idempotency-json-form` check.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import { wrapApp } from './wrap.ts';

export function build(services: Services, config: Config): BuiltApp {
  const firstBytes = new Map<string, string>();
  return wrapApp(buildApp(services, config), () => async (c, next) => {
    const key = c.req.header('idempotency-key');
    if (c.req.method !== 'POST' || c.req.path !== '/v2/orders' || key === undefined) return next();
    const scoped = `${c.req.header('x-api-key') ?? ''}\n${key}`;
    const text = await c.req.raw.clone().text();
    const first = firstBytes.get(scoped);
    if (first !== undefined && first !== text) {
      // the defect: raw bytes, not the JSON value
      const status = 422;
      const detail = `The Idempotency-Key ${key} was already used with another request body in this tenant environment.`;
      c.res = Response.json({ type: 'https://errors.payments.example/idempotency-key-reused', title: 'Idempotency key reused', status, detail }, { status, headers: { 'content-type': 'application/problem+json' } });
      return;
    }
    await next();
    if (first === undefined && c.res.status === 201) firstBytes.set(scoped, text);
  });
}
