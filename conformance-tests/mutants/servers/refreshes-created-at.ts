// Mutant: every retry re-renders the event with createdAt set to the time of the attempt (and
// signs that), so the body changes between attempts of the same event.
// Caught by the sender target's `sender.retry.after-failure` check.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import type { BuiltApp } from '../../../server/app/build-app.ts';
import { eventIdOf, resigned, withSender } from './sender-seam.ts';

export function build(services: Services, config: Config): BuiltApp {
  const seen = new Set<string>();
  return withSender(services, config, (real, secret) => async (req) => {
    const id = eventIdOf(req);
    const key = secret(req);
    if (id === undefined || key === null || !seen.has(id)) {
      if (id !== undefined) seen.add(id);
      return real(req);
    }
    const body = JSON.parse(req.body) as Record<string, unknown>;
    if (typeof body.createdAt !== 'string') return real(req);
    body.createdAt = new Date(Date.now() + 1).toISOString(); // the defect
    return real(resigned(req, key, JSON.stringify(body)));
  });
}
