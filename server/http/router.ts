// Routes every operation of a contract document: authenticate, authorize, read and
// validate the request against the spec, run the handler, and (in tests and development)
// validate the response against the spec too.
import type { Context, Hono } from 'hono';
import { compileOperation, loadOperations, type ApiName } from '../contract/operations.ts';
import { authenticateApiKey, authenticateMember, authorize, type Principal } from '../domain/auth.ts';
import type { Services } from '../domain/context.ts';
import { AppError } from '../domain/errors.ts';
import type { EnvironmentName, Permission } from '../store/types.ts';
import { readJsonBody } from './body.ts';
import { nulIssues } from './control-characters.ts';
import type { Handler } from './handler-types.ts';
import type { AppEnv } from './app-env.ts';
import type { RateLimiter } from './rate-limit.ts';

export interface RouterOptions {
  /** Check every response against the spec; a violation becomes a 500 and is logged. */
  validateResponses: boolean;
  /** Per-credential limiter, applied after authentication. */
  rateLimiter?: RateLimiter;
}

async function authenticate(c: Context<AppEnv>, api: ApiName, services: Services, allowsMember: boolean): Promise<Principal> {
  const authorization = c.req.header('authorization');
  const requested = c.req.query('environment');
  if (allowsMember && authorization !== undefined) {
    const m = /^Bearer\s+(\S+)$/i.exec(authorization);
    if (!m) throw new AppError('unauthenticated', 'The Authorization header must be `Bearer <member token>`.');
    const environment: EnvironmentName = requested === 'live' ? 'live' : 'test';
    return authenticateMember(services, m[1], environment);
  }
  const principal = await authenticateApiKey(services, c.req.header('x-api-key'), c.req.header('x-api-hash'));
  if (api === 'management' && requested !== undefined && requested !== principal.environment) {
    throw new AppError('tenant-mismatch', `This API key belongs to the ${principal.environment} environment, not ${requested}.`);
  }
  return principal;
}

/** Only the headers the operation declares are validated: reading them all costs on every request. */
function declaredHeaders(c: Context<AppEnv>, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const v = c.req.header(name);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

export function registerApi(app: Hono<AppEnv>, api: ApiName, handlers: Record<string, Handler>, services: Services, opts: RouterOptions): void {
  for (const spec of loadOperations(api)) {
    const op = compileOperation(spec);
    const handler = handlers[spec.operationId];
    // Every operation of the contract is served: a missing handler is a startup error.
    if (!handler) throw new Error(`no handler for ${api}.${spec.operationId}`);
    const allowsMember = spec.security.some((s) => 'MemberToken' in s);

    app.on(spec.method.toUpperCase(), spec.honoPath, async (c) => {
      const requestId = c.get('requestId');
      const principal = await authenticate(c, api, services, allowsMember);
      opts.rateLimiter?.take(principal.kind === 'api_key' ? principal.keyId : principal.memberId);
      authorize(principal, { permission: spec.permission as Permission | null, memberRoles: spec.memberRoles });
      const tenantHeader = c.req.header('x-tenant-id');
      if (tenantHeader !== undefined && tenantHeader !== principal.tenantId) {
        throw new AppError('tenant-mismatch', 'The x-tenant-id header names another tenant than the credentials.');
      }
      if (api === 'sandbox' && principal.environment !== 'test') {
        throw new AppError('live-key-not-allowed', 'Sandbox operations accept only credentials of the test environment.');
      }

      // Operations without a request body ignore any body that is sent.
      const body = spec.requestBody ? await readJsonBody(c) : undefined;
      const input = {
        path: c.req.param() as Record<string, string>,
        query: c.req.query(),
        headers: declaredHeaders(c, op.headerNames),
        body,
      };
      const { value, issues: schemaIssues } = op.validateRequest(input);
      const issues = [...nulIssues(input.path, '/path'), ...nulIssues(input.query, '/query'), ...nulIssues(body, '/body'), ...schemaIssues];
      if (issues.length > 0) {
        const summary = issues
          .slice(0, 3)
          .map((i) => `${i.pointer} ${i.detail}`)
          .join('; ');
        throw new AppError('validation-failed', `The request is invalid: ${summary}${issues.length > 3 ? `; and ${issues.length - 3} more` : ''}.`, {
          errors: issues,
        });
      }

      const scope = { tenantId: principal.tenantId, environmentId: principal.environmentId, environment: principal.environment };
      const reply = await handler(value, { principal, scope, services, requestId });

      if (opts.validateResponses) {
        const problems = op.validateResponse(reply.status, 'application/json', reply.body);
        if (problems.length > 0) {
          services.log.error({ requestId, operationId: spec.operationId, problems }, 'response breaks the contract');
          throw new AppError('internal', `The response of ${spec.operationId} broke the contract.`);
        }
      }
      return c.json(reply.body as object, reply.status as 200, reply.headers);
    });
  }
}
