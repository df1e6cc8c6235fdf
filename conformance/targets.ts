// The targets of `payments-conformance`. A new target is one entry here: implement the
// `Target` interface (conformance/core/target.ts) and replace its planned entry.
import { TargetRegistry } from './core/target.ts';
import { createApiTarget } from './api/target.ts';
import { createReceiverTarget } from './receiver/target.ts';
import { createSenderTarget } from './sender/target.ts';

export function createTargetRegistry(): TargetRegistry {
  return new TargetRegistry([createReceiverTarget(), createApiTarget(), createSenderTarget()]);
}
