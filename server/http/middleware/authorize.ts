// What the caller may do: the operation's `x-permission` for an API key, its `x-member-roles`
// for a member; 403 permission-denied otherwise.
import type { MiddlewareHandler } from 'hono';
import { authorize as authorizePrincipal } from '../../domain/auth.ts';
import type { Permission } from '../../domain/model.ts';
import type { AppEnv } from '../app-env.ts';

export function authorize(need: { permission: Permission | null; memberRoles: readonly string[] | null }): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    authorizePrincipal(c.get('principal'), need);
    await next();
  };
}
