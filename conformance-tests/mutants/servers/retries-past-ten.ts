// Mutant 6: retries past ten attempts. The injected retry schedule never ends a cycle: after
// the tenth failed attempt it keeps retrying at the last delay of the real schedule.
// Caught by the sender target's `sender.attempts.at-most-ten` check.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import { MAX_ATTEMPTS, nextAttemptAt } from '../../../server/delivery/schedule.ts';

export function build(services: Services, config: Config): BuiltApp {
  return buildApp(services, config, {
    delivery: { schedule: (attempt, now, policy) => nextAttemptAt(Math.min(attempt, MAX_ATTEMPTS - 1), now, policy) },
  });
}
