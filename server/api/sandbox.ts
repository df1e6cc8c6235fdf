// The sandbox API: money operations and order operations, in two modules, and the test event.
import type { operations } from '../../generated/types/sandbox.ts';
import { AppError } from '../domain/errors.ts';
import { recordStreamTestEvent } from '../domain/events.ts';
import { refuseUnlessWriter } from '../domain/write-faults.ts';
import type { HandlersFor } from '../http/handler-types.ts';
import { sandboxMoneyHandlers } from './sandbox-money.ts';
import { sandboxOrderHandlers } from './sandbox-orders.ts';

export const sandboxHandlers: Partial<HandlersFor<operations>> = {
  ...sandboxMoneyHandlers,
  ...sandboxOrderHandlers,
  async createSandboxTestEvent(_input, { services, scope }) {
    return { status: 201, body: await recordStreamTestEvent(services, scope) };
  },
  async injectSandboxWriteFault({ body }, { services, scope, principal }) {
    refuseUnlessWriter(principal);
    if (!services.writeFaults) throw new AppError('internal', 'This server was built without sandbox write faults.');
    services.writeFaults.arm(scope.environmentId, body.fault);
    return { status: 200, body: { environment: 'test', fault: body.fault } };
  },
};
