// The sandbox API: money operations and order operations, in two modules.
import type { operations } from '../../generated/types/sandbox.ts';
import type { HandlersFor } from '../http/handler-types.ts';
import { sandboxMoneyHandlers } from './sandbox-money.ts';
import { sandboxOrderHandlers } from './sandbox-orders.ts';

export const sandboxHandlers: Partial<HandlersFor<operations>> = { ...sandboxMoneyHandlers, ...sandboxOrderHandlers };
