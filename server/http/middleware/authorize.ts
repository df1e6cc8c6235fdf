// What the caller may do: the operation's `x-permission` for an API key, its `x-member-roles`
// for a member; 403 permission-denied otherwise.
import { authorize as authorizePrincipal } from '../../domain/auth.ts';
import type { Permission } from '../../domain/model.ts';
import { asMiddleware, type Step } from './step.ts';

type Need = { permission: Permission | null; memberRoles: readonly string[] | null };

export const authorize = (need: Need) => asMiddleware(authorizeStep(need));

export function authorizeStep(need: Need): Step {
  return (c) => authorizePrincipal(c.get('principal'), need);
}
