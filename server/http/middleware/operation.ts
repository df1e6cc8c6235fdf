// Names the contract operation being served, for what runs around the route (request metrics
// label requests by operation, never by raw path, so ids and tenants stay out of labels).
import { asMiddleware, type Step } from './step.ts';

export const operation = (operationId: string) => asMiddleware(operationStep(operationId));

export function operationStep(operationId: string): Step {
  return (c) => {
    c.set('operationId', operationId);
  };
}
