// Mutant: a delivery left pending by a URL edit is not disabled: the sender keeps the request
// of an unsuccessful attempt that was not retried, and sends it to the next URL it delivers to
// (the replacement endpoint), the defect the delivery states forbid.
// Caught by the sender target's `sender.version.url-edit` check.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import type { BuiltApp } from '../../../server/app/build-app.ts';
import type { SendRequest } from '../../../server/delivery/sender.ts';
import { eventIdOf, withSender } from './sender-seam.ts';

const CYCLE = 10;

export function build(services: Services, config: Config): BuiltApp {
  const sends = new Map<string, number>();
  const left = new Map<string, SendRequest>();
  return withSender(services, config, (real) => async (req) => {
    const id = eventIdOf(req) ?? '';
    sends.set(id, (sends.get(id) ?? 0) + 1);
    left.delete(id); // retried: not left behind
    for (const [oldId, old] of left) {
      if (old.url === req.url) continue;
      left.delete(oldId);
      await real({ ...old, url: req.url }); // the defect
    }
    const outcome = await real(req);
    if (!outcome.success && (sends.get(id) ?? 0) < CYCLE) left.set(id, req);
    return outcome;
  });
}
