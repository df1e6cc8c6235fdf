// Variables every request carries through the Hono context. `requestId` is set for every
// request; the others are set by the operation middleware (middleware/) in this order:
// `principal` by authenticate, `body` by jsonBody, `request` by validateRequest.
import type { ValidatedRequest } from '../contract/operations.ts';
import type { Principal } from '../domain/auth.ts';
import type { StoreCalls } from './store-calls.ts';

export interface AppEnv {
  Variables: {
    requestId: string;
    principal: Principal;
    body: unknown;
    request: ValidatedRequest;
    /** The contract operation being served (set by the router; request metrics label by it). */
    operationId?: string;
    /** The request's signal and its store writes (set by the deadline, middleware/deadline.ts). */
    storeCalls?: StoreCalls;
  };
}
