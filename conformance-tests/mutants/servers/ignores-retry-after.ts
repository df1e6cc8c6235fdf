// Mutant: ignores a receiver's Retry-After. The injected Sender drops the header from every
// answer, so a 429 is retried on the (shortened) schedule and the endpoint's other deliveries
// go on at once. Caught by the sender target's `retry-after.delivery` and `retry-after.endpoint`.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import type { BuiltApp } from '../../../server/app/build-app.ts';
import { withSender } from './sender-seam.ts';

export function build(services: Services, config: Config): BuiltApp {
  return withSender(services, config, (real) => async (req) => {
    const { retryAfter: _ignored, ...outcome } = await real(req);
    return outcome;
  });
}
