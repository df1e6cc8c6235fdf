// Sandbox operations move test money only: credentials of the live environment get 403.
import type { MiddlewareHandler } from 'hono';
import { AppError } from '../../domain/errors.ts';
import type { AppEnv } from '../app-env.ts';

export function testEnvironmentOnly(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (c.get('principal').environment !== 'test') {
      throw new AppError('live-key-not-allowed', 'Sandbox operations accept only credentials of the test environment.');
    }
    await next();
  };
}
