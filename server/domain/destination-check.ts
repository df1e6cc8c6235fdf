// Webhook and notifyUrl addresses through the destination policy, as contract errors.
import { isDestinationRefusedError } from '../destination/rules.ts';
import type { Services } from './context.ts';
import { AppError } from './errors.ts';

/** The normalised URL to store, or a 400 destination-not-allowed naming the broken rule. */
export function checkDestination(services: Pick<Services, 'destinations'>, url: string, field: string): string {
  try {
    return services.destinations.checkUrl(url).href;
  } catch (e) {
    if (isDestinationRefusedError(e)) {
      throw new AppError('destination-not-allowed', `${field} is not an allowed destination: ${e.detail}.`, { rule: e.rule });
    }
    throw e;
  }
}
