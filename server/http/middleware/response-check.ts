// In tests and development: the operation's answer is checked against the spec after the
// handler ran. A violation is logged and answered 500, so a handler can never quietly ship a
// shape the contract does not document. Problem answers (c.error set) come from the one
// error handler and are not re-checked.
import type { MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import type { CompiledOperation } from '../../contract/operations.ts';
import { AppError } from '../../domain/errors.ts';
import type { AppEnv } from '../app-env.ts';

export function checkResponse(op: CompiledOperation, log: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    if (c.error) return;
    const contentType = c.res.headers.get('content-type')?.split(';')[0]?.trim() ?? null;
    const text = await c.res.clone().text();
    const body: unknown = text === '' ? undefined : JSON.parse(text);
    const problems = op.validateResponse(c.res.status, contentType, body);
    if (problems.length > 0) {
      log.error({ requestId: c.get('requestId'), operationId: op.spec.operationId, problems }, 'response breaks the contract');
      throw new AppError('internal', `The response of ${op.spec.operationId} broke the contract.`);
    }
  };
}
