// The callback secret of a tenant environment signs the payout-completed callbacks sent to
// payouts' notifyUrl. Rotating it answers the new secret once; it is stored only sealed.
// Pending callbacks stay pending: the worker reads the secret at each attempt, so their next
// attempts are signed with the new one.
import { generateSecret } from '../../../signing/signature.ts';
import type { Millis } from '../model.ts';
import type { Scope, Services } from '../context.ts';

export interface RotatedCallbackSecret {
  secret: string;
  rotatedAt: Millis;
}

export async function rotateCallbackSecret(services: Services, scope: Scope): Promise<RotatedCallbackSecret> {
  const secret = generateSecret();
  return services.store.transaction(async (tx) => {
    const rotatedAt = services.clock.now();
    await tx.tenants.setCallbackSecret(scope.environmentId, services.secrets.seal(secret));
    return { secret, rotatedAt };
  });
}
