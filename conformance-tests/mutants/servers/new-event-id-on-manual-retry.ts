// Mutant: a manual retry of a failed delivery goes out as a new event: a fresh event id in the
// header and the body (re-signed), so a receiver that deduplicates by event id applies it twice.
// Caught by the sender target's `sender.retry.manual-same-event` check.
import { randomBytes } from 'node:crypto';
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import type { BuiltApp } from '../../../server/app/build-app.ts';
import { eventIdOf, resigned, withSender } from './sender-seam.ts';

const CYCLE = 10;

export function build(services: Services, config: Config): BuiltApp {
  const sends = new Map<string, number>();
  return withSender(services, config, (real, secret) => async (req) => {
    const id = eventIdOf(req);
    const key = secret(req);
    if (id === undefined || key === null) return real(req);
    const n = (sends.get(id) ?? 0) + 1;
    sends.set(id, n);
    if (n <= CYCLE) return real(req);
    const fresh = randomBytes(32).toString('hex'); // the defect: a new cycle, a new event
    const body = JSON.parse(req.body) as Record<string, unknown>;
    if (typeof body.id === 'string') body.id = fresh;
    return real(resigned(req, key, JSON.stringify(body), fresh));
  });
}
