// Mutant: revoking an already revoked staking payout answers 200 again (its first answer,
// replayed) instead of 409 not-revocable.
// Caught by the api target's `api.rules.revoke-not-active` check.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import { wrapApp } from './wrap.ts';

export function build(services: Services, config: Config): BuiltApp {
  const revoked = new Map<string, string>();
  return wrapApp(buildApp(services, config), () => async (c, next) => {
    if (c.req.method !== 'POST' || c.req.path !== '/transactions/staking/payout/revoke') return next();
    const { transactionId } = (await c.req.raw.clone().json().catch(() => ({}))) as { transactionId?: string };
    await next();
    if (typeof transactionId !== 'string') return;
    if (c.res.status === 200) revoked.set(transactionId, await c.res.clone().text());
    const first = revoked.get(transactionId);
    if (c.res.status === 409 && first !== undefined) c.res = new Response(first, { status: 200, headers: { 'content-type': 'application/json' } }); // the defect
  });
}
