// Mutant: a 4xx answer counts as delivered ("the receiver understood us"), so such a delivery
// is never retried; only 2xx may end a delivery.
// Caught by the sender target's `sender.retry.after-4xx` check.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import type { BuiltApp } from '../../../server/app/build-app.ts';
import { withSender } from './sender-seam.ts';

export function build(services: Services, config: Config): BuiltApp {
  return withSender(services, config, (real) => async (req) => {
    const outcome = await real(req);
    const status = outcome.statusCode ?? 0;
    return status >= 400 && status < 500 ? { ...outcome, success: true } : outcome; // the defect
  });
}
