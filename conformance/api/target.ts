// `payments-conformance api`: checks an implementation of the HTTP APIs (Transactions, v2
// orders, webhook management, sandbox) against the OpenAPI documents. The checks are derived
// by walking the bundled documents (generated/openapi/), so a spec change changes the suite.
import { lostCommitChecks } from './lost-commit.ts';
import { recoverWindowChecks } from './recover-window.ts';
import { streamOpeningChecks } from './stream-opening.ts';
import { isolationChecks, unknownIdChecks } from './isolation.ts';
import { exactSearchChecks } from './exact-search.ts';
import { environmentChecks } from './environment.ts';
import { refusalChecks } from './refusals.ts';
import { endpointRuleChecks } from './endpoint-rules.ts';
import { keyChecks } from './keys.ts';
import { paymentStatusChecks } from './payment-status.ts';
import { listRuleChecks } from './list-rules.ts';
import { faultRuleChecks, writeFaultChecks } from './write-faults.ts';
import type { Target } from '../core/target.ts';
import { UsageError, integerOption, optionalString, urlOption } from '../core/target.ts';
import { operationChecks } from './checks.ts';
import { ApiClient } from '../core/openapi/client.ts';
import type { KeyCredentials } from '../core/openapi/client.ts';
import { walkOperations } from '../core/openapi/contract.ts';
import type { ApiName, ApiOperation } from '../core/openapi/contract.ts';
import { credentialOption } from '../core/credentials.ts';
import { errorChecks } from './errors.ts';
import { endpointChecks } from './endpoints.ts';
import { API_CATALOGUE } from './rules.ts';
import { statefulChecks } from './stateful.ts';
import { orderRetryChecks } from './order-retries.ts';
import { mediaTypeChecks } from './media-type.ts';
import { strictApiChecks } from './strict.ts';
import { ApiState } from './state.ts';
import { WALLET_NOTE, WalletKeeper } from '../core/wallet.ts';

export interface ApiTargetDeps {
  /** The operations to check (default: every operation of the four documents). */
  operations?: ApiOperation[];
  env?: NodeJS.ProcessEnv;
}

export function createApiTarget(deps: ApiTargetDeps = {}): Target {
  return {
    name: 'api',
    summary: 'checks an implementation of the Transactions, v2 order, management and sandbox APIs against the OpenAPI documents',
    implemented: true,
    synopsis:
      'api --base-url URL --api-key K --api-hash H --tenant-id T [--orders-url URL] [--member-token M] [--other-api-key K2 --other-api-hash H2 --other-tenant-id T2] [--limited-api-key K3 --limited-api-hash H3] [--live-api-key K4 --live-api-hash H4] [--refund-email E] [--webhook-url URL] [--skip-stateful] [options]',
    description: `
For every operation of the four OpenAPI documents (spec/*.openapi.yaml):
- a valid request, built from the documented examples and the state it needs (created first
  through the API and the sandbox), must get the documented success status with a body valid
  against the response schema and the documented content type;
- requests that must fail, generated from the schemas with values drawn from the seed: no
  credentials, no x-api-hash, a wrong x-api-hash, an unknown key (401); another tenant's
  x-tenant-id (403); each required field missing, each field of the wrong type, below its
  minimum, above its maximum, too long or too short, off its pattern or format, an unknown
  enum value, too many decimals, an unknown extra field (400 validation-failed). Each must be a
  documented 4xx of the operation, application/problem+json, valid against Problem, with a type
  of common/problem-types.yaml; never a 5xx;
- stateful rules (duplicate thirdPartyId, default staking duration, payout settlement, refunds,
  cancelled orders, cross-tenant isolation) through the sandbox; skipped when the
  implementation has none.
An operation answered 404 route-not-found, 405 or 501 is reported as not implemented.
Management operations need --member-token or an API key with webhooks_manage. The suite
creates an endpoint at --webhook-url (when the environment has no active one), edits, rotates
and tests it, and disables it when the run ends. Use --skip-stateful against a mock (Prism):
only the checks a mock can honour run. Credentials can be given as env:NAME.`,
    options: {
      'base-url': { type: 'string', value: 'URL', description: 'the Transactions API ({transactions_base_url}); also the sandbox' },
      'orders-url': { type: 'string', value: 'URL', description: 'the v2 order API ({base_url}); also webhook management', defaultText: '--base-url' },
      'management-url': { type: 'string', value: 'URL', description: 'the webhook management API', defaultText: '--orders-url' },
      'sandbox-url': { type: 'string', value: 'URL', description: 'the sandbox API', defaultText: '--base-url' },
      'api-key': { type: 'string', value: 'K', description: 'x-api-key of a test key with every permission' },
      'api-hash': { type: 'string', value: 'H', description: 'its x-api-hash' },
      'tenant-id': { type: 'string', value: 'T', description: 'the tenant of the key (x-tenant-id)' },
      'member-token': { type: 'string', value: 'M', description: 'an administrator or developer member token, for the management operations' },
      'other-api-key': { type: 'string', value: 'K2', description: "another tenant's x-api-key, for the isolation checks" },
      'other-api-hash': { type: 'string', value: 'H2', description: "another tenant's x-api-hash" },
      'other-tenant-id': { type: 'string', value: 'T2', description: "the other tenant's id" },
      'limited-api-key': { type: 'string', value: 'K3', description: 'x-api-key of a key of the same tenant environment with no permission, for the permission-denied checks' },
      'limited-api-hash': { type: 'string', value: 'H3', description: 'its x-api-hash' },
      'live-api-key': { type: 'string', value: 'K4', description: 'x-api-key of a key of the live environment of the same tenant, for the live-key-not-allowed checks of the sandbox (nothing is sent with it that the sandbox does not refuse)' },
      'live-api-hash': { type: 'string', value: 'H4', description: 'its x-api-hash' },
      'refund-email': { type: 'string', value: 'E', description: 'the e-mail of a service account of the tenant, for the refund checks' },
      'webhook-url': { type: 'string', value: 'URL', description: 'a URL the implementation accepts as a webhook destination, for the endpoint checks' },
      'skip-stateful': { type: 'boolean', description: 'only schema-level checks a mock can honour (no state is created)' },
      'timeout-ms': { type: 'string', value: 'N', description: 'how long to wait for each answer', defaultText: '10000' },
    },
    async prepare(values, ctx) {
      const env = deps.env ?? process.env;
      const base = urlOption(values, 'base-url', true).href;
      const orders = urlOption(values, 'orders-url', false)?.href ?? base;
      const baseUrls: Record<ApiName, string> = {
        transactions: base,
        orders,
        management: urlOption(values, 'management-url', false)?.href ?? orders,
        sandbox: urlOption(values, 'sandbox-url', false)?.href ?? base,
      };
      const creds: KeyCredentials = {
        apiKey: credentialOption(values, 'api-key', env, true),
        apiHash: credentialOption(values, 'api-hash', env, true),
        tenantId: credentialOption(values, 'tenant-id', env, true),
      };
      const otherGiven = ['other-api-key', 'other-api-hash', 'other-tenant-id'].filter((n) => values[n] !== undefined);
      if (otherGiven.length > 0 && otherGiven.length < 3) throw new UsageError('--other-api-key, --other-api-hash and --other-tenant-id go together');
      const other: KeyCredentials | undefined =
        otherGiven.length === 3
          ? {
              apiKey: credentialOption(values, 'other-api-key', env, true),
              apiHash: credentialOption(values, 'other-api-hash', env, true),
              tenantId: credentialOption(values, 'other-tenant-id', env, true),
            }
          : undefined;
      if (other && other.tenantId === creds.tenantId) throw new UsageError('--other-tenant-id must be another tenant than --tenant-id');
      const limitedGiven = ['limited-api-key', 'limited-api-hash'].filter((n) => values[n] !== undefined);
      if (limitedGiven.length === 1) throw new UsageError('--limited-api-key and --limited-api-hash go together');
      const limited = limitedGiven.length === 2 ? { apiKey: credentialOption(values, 'limited-api-key', env, true), apiHash: credentialOption(values, 'limited-api-hash', env, true) } : undefined;
      const liveGiven = ['live-api-key', 'live-api-hash'].filter((n) => values[n] !== undefined);
      if (liveGiven.length === 1) throw new UsageError('--live-api-key and --live-api-hash go together');
      const live = liveGiven.length === 2 ? { apiKey: credentialOption(values, 'live-api-key', env, true), apiHash: credentialOption(values, 'live-api-hash', env, true) } : undefined;
      const memberToken = credentialOption(values, 'member-token', env, false);
      const refundEmail = optionalString(values, 'refund-email');
      const webhookUrl = urlOption(values, 'webhook-url', false)?.href;
      const skipStateful = values['skip-stateful'] === true;
      const timeoutMs = integerOption(values, 'timeout-ms', 10_000, 100, 600_000);

      const operations = deps.operations ?? walkOperations();
      const client = new ApiClient({ baseUrls, timeoutMs });
      const state = new ApiState({
        client,
        operations,
        creds,
        seed: ctx.seed,
        runNonce: Date.now().toString(36),
        skipStateful,
        ...(memberToken ? { memberToken } : {}),
        ...(refundEmail ? { refundEmail } : {}),
        ...(webhookUrl ? { webhookUrl } : {}),
      });
      // Repeatable on the same credentials: what the run's payouts spend is funded back at the end.
      const wallet = skipStateful ? null : new WalletKeeper({ client, operations, auth: state.keyAuth() });
      const checks = [
        ...operationChecks({ operations, state, client, creds, skipStateful, ...(other ? { otherTenantId: other.tenantId } : {}) }),
        ...statefulChecks({ operations, state, client, creds, skipStateful, ...(other ? { other } : {}) }),
        ...orderRetryChecks({ operations, state, client, creds, skipStateful }),
        ...lostCommitChecks({ operations, state, client, creds, skipStateful }),
        ...recoverWindowChecks({ operations, state, client, creds, skipStateful }),
        ...endpointChecks({ operations, state, client, creds, skipStateful }),
        ...streamOpeningChecks({ operations, state, client, creds, skipStateful }),
        ...mediaTypeChecks({ state, client, skipStateful }),
        ...errorChecks({ operations, state, client, creds, skipStateful, ...(limited ? { limited } : {}) }),
        ...strictApiChecks({ state, client, creds, skipStateful, ...(other ? { other } : {}) }),
        ...isolationChecks({ operations, state, client, skipStateful, ...(other ? { other } : {}) }),
        ...unknownIdChecks({ operations, state, client, skipStateful }),
        ...environmentChecks({ operations, state, client, skipStateful }),
        ...refusalChecks({ operations, state, client, creds, skipStateful }),
        ...endpointRuleChecks({ operations, state, client, creds, skipStateful }),
        ...keyChecks({ operations, state, client, creds, skipStateful, ...(live ? { live } : {}), ...(limited ? { limited } : {}) }),
        ...exactSearchChecks({ state, client, skipStateful }),
        ...paymentStatusChecks({ state, client, skipStateful }),
        ...listRuleChecks({ state, client, creds, skipStateful }),
        ...writeFaultChecks({ operations, state, client, skipStateful }),
        ...faultRuleChecks({ operations, state, client, skipStateful, ...(other ? { other } : {}) }),
      ];
      const apis = [...new Set(operations.map((o) => o.api))];
      const notes = [
        `${operations.length} operations of ${apis.map((a) => `${a} (${baseUrls[a]})`).join(', ')}`,
        skipStateful ? '--skip-stateful: no state is created; checks a mock cannot honour are skipped' : 'state is created through the API and the sandbox of the tenant environment',
        memberToken ? 'management operations use the member token' : 'no --member-token: management operations use the API key if it has webhooks_manage',
        ...(other ? [] : ['no --other-* credentials: the cross-tenant isolation checks are skipped']),
        ...(limited ? [] : ['no --limited-api-key: the permission-denied checks are skipped']),
        ...(live ? [] : ['no --live-api-key: the live-key-not-allowed checks of the sandbox are skipped']),
        ...(refundEmail ? [] : ['no --refund-email: the refund checks that need a service account are skipped']),
        ...(webhookUrl ? [] : ['no --webhook-url: the checks that need a webhook endpoint are skipped']),
      ];
      return {
        checks,
        notes,
        catalogue: API_CATALOGUE,
        start: async () => ((await wallet?.start()) ? [WALLET_NOTE] : []),
        close: async () => {
          await wallet?.restore().catch(() => 0n);
          // Leave no active endpoint behind: disable the one the suite created.
          const id = await state.createdEndpointId();
          if (!id || !state.hasOp('updateWebhookEndpoint')) return;
          try {
            const auth = await state.managementAuth();
            await client.call(state.op('updateWebhookEndpoint'), { auth, path: { endpointId: id }, body: { active: false }, label: 'disable the suite endpoint' });
          } catch {
            // Best effort: the run's results stand either way.
          }
        },
      };
    },
  };
}
