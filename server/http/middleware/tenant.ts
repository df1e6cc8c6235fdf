// An `x-tenant-id` header, when sent, must name the credentials' own tenant (403 tenant-mismatch).
import type { MiddlewareHandler } from 'hono';
import { AppError } from '../../domain/errors.ts';
import type { AppEnv } from '../app-env.ts';

export function tenantCheck(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const tenantHeader = c.req.header('x-tenant-id');
    if (tenantHeader !== undefined && tenantHeader !== c.get('principal').tenantId) {
      throw new AppError('tenant-mismatch', 'The x-tenant-id header names another tenant than the credentials.');
    }
    await next();
  };
}
