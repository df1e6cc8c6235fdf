// Who is calling: an API key (`x-api-key` + `x-api-hash`) or, where the operation's security
// allows it, a member token (`Authorization: Bearer`). Sets `principal`; 401 otherwise.
import { authenticateApiKey, authenticateMember } from '../../domain/auth.ts';
import type { Services } from '../../domain/context.ts';
import { AppError } from '../../domain/errors.ts';
import type { EnvironmentName } from '../../domain/model.ts';
import { asMiddleware, type Step } from './step.ts';

export interface AuthenticateOptions {
  services: Services;
  /** The operation accepts a member token (its security lists MemberToken). */
  allowsMember: boolean;
  /**
   * The `environment` query parameter selects the environment (management API): a member acts
   * in it, and an API key, bound to one environment, must not name another.
   */
  environmentQuery: boolean;
}

export const authenticate = (opts: AuthenticateOptions) => asMiddleware(authenticateStep(opts));

export function authenticateStep(opts: AuthenticateOptions): Step {
  return async (c) => {
    const authorization = c.req.header('authorization');
    const requested = c.req.query('environment');
    if (opts.allowsMember && authorization !== undefined) {
      const m = /^Bearer\s+(\S+)$/i.exec(authorization);
      if (!m) throw new AppError('unauthenticated', 'The Authorization header must be `Bearer <member token>`.');
      const environment: EnvironmentName = requested === 'live' ? 'live' : 'test';
      c.set('principal', await authenticateMember(opts.services, m[1], environment));
    } else {
      const principal = await authenticateApiKey(opts.services, c.req.header('x-api-key'), c.req.header('x-api-hash'));
      if (opts.environmentQuery && requested !== undefined && requested !== principal.environment) {
        throw new AppError('tenant-mismatch', `This API key belongs to the ${principal.environment} environment, not ${requested}.`);
      }
      c.set('principal', principal);
    }
  };
}
