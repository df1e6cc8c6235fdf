// `payments-conformance sender`: checks an implementation's webhook sender. The suite runs its
// own receiver on --listen, points the tenant environment's endpoint at it through the
// management API, triggers events through the v2 order API and the sandbox, and checks every
// delivery against the AsyncAPI document and the delivery rules.
import { webhookChannels } from '../core/asyncapi.ts';
import type { ChannelSpec } from '../core/asyncapi.ts';
import { UsageError, integerOption, optionalString, requiredString, urlOption } from '../core/target.ts';
import type { Target } from '../core/target.ts';
import type { ApiName } from '../core/openapi/contract.ts';
import { credentialOption } from '../core/credentials.ts';
import { subSeed } from '../core/seed.ts';
import { MIN_SECRET_BYTES, secretByteLength } from '../../signing/signature.ts';
import { senderChecks } from './checks.ts';
import { SENDER_CATALOGUE } from './rules.ts';
import { SuiteReceiver } from './receiver.ts';
import { SenderSession } from './session.ts';
import { WALLET_NOTE, WalletKeeper } from '../core/wallet.ts';
import { walkOperations } from '../core/openapi/contract.ts';

export interface SenderTargetDeps {
  channels?: ChannelSpec[];
  env?: NodeJS.ProcessEnv;
}

export function createSenderTarget(deps: SenderTargetDeps = {}): Target {
  return {
    name: 'sender',
    summary: "checks an implementation's webhook sender (headers, signatures, payloads, retries, timeouts) against the AsyncAPI document",
    implemented: true,
    synopsis:
      'sender --base-url URL --api-key K --api-hash H --tenant-id T --member-token M --listen HOST:PORT [--public-url URL] [--callback-secret S] [--skip-slow] [options]',
    description: `
The suite listens on --listen (the implementation must reach it at --public-url, default
http://HOST:PORT), points the tenant environment's webhook endpoint at it with the member
token (creating it, or updating the active one and rotating its secret: the secret is only
shown at creation and rotation), and triggers events through the v2 order API and the sandbox:
- every message of the order webhook channel (order.created, order.paid,
  order.payment_review_required, webhook.test): headers, signature (HMAC over "<t>.<raw
  body>" with the secret), body valid against the message's payload schema;
- the payout-completed callback to a payout's notifyUrl (signature with --callback-secret);
- a 500 (held 1.2 s), then a 2xx: retried with the same event id and body and a later t;
- a 302 to another path of the suite: not followed, retried;
- a held answer: cut at 10 s (the contract's timeout; --skip-slow skips this one);
- 500 every time: at most ten attempts (skipped when the schedule does not reach ten within
  --attempts-window-ms);
- a failed delivery retried by hand: the original event id and payload, a later t;
- the signing secret rotated while an attempt is in flight: an event created after it is
  signed with the new secret alone; the callback secret rotated while a callback is in
  flight: its next attempt is signed with the new one. Both secrets stay rotated;
- recovery by time range: four orders delivered one after another, the middle two's window
  recovered twice (include all), then once failed-only: each arrives again once per
  include-all request, same event id and body, validly signed; the others do not; then, after
  a URL edit, a secret rotation and a scheme switch, a recovered delivery reaches the new URL
  only, signed with the new secret, in the new scheme (the scheme is set back), and nothing
  reaches the old URL before a test webhook sent afterwards; eight orders' deliveries of one
  added endpoint recovered after its eventTypes were narrowed: the k-th to arrive no sooner
  than k x 50 ms after the request, only its own types, nothing to another endpoint;
- a delivery pending a retry (first attempt held, then 500) when its endpoint is disabled,
  its secret rotated or its eventTypes narrowed: never sent again, reads disabled; when its
  scheme changes: tried again in the new scheme;
- the payout callback of every settlement outcome (success, cancelled);
- a test webhook reaches its own endpoint only;
- every delivery carries the header sets of the endpoint's signatureScheme (both: each set,
  verified on its own, on every attempt);
- the endpoint disabled: no delivery. The run leaves the endpoint disabled.
Secrets and tokens can be given as env:NAME or file:PATH. The run rotates the callback secret:
to run again, give --save-callback-secret FILE and then --callback-secret file:FILE.`,
    options: {
      'base-url': { type: 'string', value: 'URL', description: 'the Transactions API and the sandbox' },
      'orders-url': { type: 'string', value: 'URL', description: 'the v2 order API and webhook management', defaultText: '--base-url' },
      'api-key': { type: 'string', value: 'K', description: 'x-api-key of a test key (orders_write, payouts)' },
      'api-hash': { type: 'string', value: 'H', description: 'its x-api-hash' },
      'tenant-id': { type: 'string', value: 'T', description: 'the tenant of the key' },
      'member-token': { type: 'string', value: 'M', description: 'an administrator or developer member token, to configure the webhook endpoint' },
      listen: { type: 'string', value: 'HOST:PORT', description: "where the suite's receiver listens (port 0: any free port)" },
      'public-url': { type: 'string', value: 'URL', description: 'how the implementation reaches the receiver', defaultText: 'http://HOST:PORT' },
      'callback-secret': {
        type: 'string',
        value: 'S',
        description: "the tenant environment's current callback secret, to verify the payout-completed callback (the sender target's rotation.callback-secret check and the api target's rotateCallbackSecret check rotate it: give the current one to each run)",
      },
      'save-callback-secret': {
        type: 'string',
        value: 'FILE',
        description: 'write the callback secret the run rotates to FILE (mode 600); the next run gives --callback-secret file:FILE',
      },
      'skip-slow': { type: 'boolean', description: 'skip the check that holds an answer for 10 s' },
      'wait-ms': { type: 'string', value: 'N', description: 'how long to wait for an expected delivery', defaultText: '30000' },
      'attempts-window-ms': { type: 'string', value: 'N', description: 'how long to watch for the ten attempts of an always-failing delivery (and for the two retries that end the pending.* watch)', defaultText: '120000' },
      scheme: {
        type: 'string',
        value: 'S',
        description: "the endpoint's signatureScheme to set: service-signature, standard-webhooks or both (each delivery's signature headers are then verified in it)",
        defaultText: 'left as it is',
      },
      'quiet-ms': { type: 'string', value: 'N', description: 'how long nothing must arrive at a disabled endpoint', defaultText: '5000' },
      'timeout-ms': { type: 'string', value: 'N', description: 'how long to wait for each API answer', defaultText: '10000' },
    },
    async prepare(values, ctx) {
      const env = deps.env ?? process.env;
      const base = urlOption(values, 'base-url', true).href;
      const orders = urlOption(values, 'orders-url', false)?.href ?? base;
      const baseUrls: Record<ApiName, string> = { transactions: base, sandbox: base, orders, management: orders };
      const creds = {
        apiKey: credentialOption(values, 'api-key', env, true),
        apiHash: credentialOption(values, 'api-hash', env, true),
        tenantId: credentialOption(values, 'tenant-id', env, true),
      };
      const memberToken = credentialOption(values, 'member-token', env, true);
      const listen = requiredString(values, 'listen');
      const m = /^(.+):([0-9]{1,5})$/.exec(listen);
      if (!m || Number(m[2]) > 65535) throw new UsageError('--listen must be HOST:PORT, for example 127.0.0.1:4599');
      const host = m[1]!.replace(/^\[(.*)\]$/, '$1');
      const callbackSecret = credentialOption(values, 'callback-secret', env, false);
      if (callbackSecret !== undefined && secretByteLength(callbackSecret) < MIN_SECRET_BYTES) {
        throw new UsageError(`--callback-secret is shorter than ${MIN_SECRET_BYTES} bytes; give the whole secret (whsec_...)`);
      }
      const publicUrlOption = urlOption(values, 'public-url', false);
      const waitMs = integerOption(values, 'wait-ms', 30_000, 100, 3_600_000);
      const attemptsWindowMs = integerOption(values, 'attempts-window-ms', 120_000, 1_000, 86_400_000);
      const quietMs = integerOption(values, 'quiet-ms', 5_000, 100, 600_000);
      const timeoutMs = integerOption(values, 'timeout-ms', 10_000, 100, 600_000);

      const receiver = await SuiteReceiver.start(host, Number(m[2]));
      const publicUrl = publicUrlOption?.href ?? receiver.url;
      const session = new SenderSession({
        baseUrls,
        creds,
        memberToken,
        publicUrl,
        runToken: subSeed(ctx.seed, `run/${Date.now()}`).toString(36),
        seed: ctx.seed,
        timeoutMs,
        ...(optionalString(values, 'scheme') !== undefined ? { scheme: optionalString(values, 'scheme') } : {}),
        ...(typeof values['save-callback-secret'] === 'string' ? { saveCallbackSecret: values['save-callback-secret'] } : {}),
      });
      // Repeatable on the same credentials: the settled payouts' amounts are funded back at the end.
      const wallet = new WalletKeeper({ client: session.client, operations: walkOperations(), auth: { kind: 'key', apiKey: creds.apiKey, apiHash: creds.apiHash } });
      const checks = senderChecks({
        session,
        receiver,
        channels: deps.channels ?? webhookChannels(),
        skipSlow: values['skip-slow'] === true,
        waitMs,
        attemptsWindowMs,
        quietMs,
        ...(callbackSecret ? { callbackSecret } : {}),
      });
      return {
        checks,
        notes: [
          `receiver listening on ${receiver.url}; the implementation reaches it at ${publicUrl}`,
          'the endpoint is pointed at the suite (created, or updated and its secret rotated) and left disabled at the end',
          "the endpoint's signing secret and the environment's callback secret are rotated near the end (rule 8 checks): the callback secret given is no longer valid after the run",
          ...(callbackSecret ? [] : ['no --callback-secret: the payout callback signature is not verified']),
          ...(values['skip-slow'] === true ? ['--skip-slow: the 10 s timeout check is skipped'] : []),
        ],
        start: async () => ((await wallet.start()) ? [WALLET_NOTE] : []),
        close: async () => {
          await wallet.restore().catch(() => 0n);
          await receiver.close();
        },
        catalogue: SENDER_CATALOGUE,
      };
    },
  };
}
