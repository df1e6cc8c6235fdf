// `payments-conformance receiver`: replays signed events at a merchant's receiver, exactly as
// the service sends them, and checks what it answers.
import { webhookChannels } from '../core/asyncapi.ts';
import type { ChannelSpec } from '../core/asyncapi.ts';
import { UsageError, integerOption, optionalString, urlOption } from '../core/target.ts';
import type { OptionValues, Target } from '../core/target.ts';
import { MIN_SECRET_BYTES, secretByteLength } from '../../signing/signature.ts';
import { TOLERANCE_SECONDS, receiverChecks } from './checks.ts';
import { RECEIVER_CATALOGUE } from './rules.ts';
import { STANDARD_CATALOGUE, standardReceiverChecks } from './standard.ts';
import { isStandardSecret } from '../core/standard-signature.ts';
import type { ChannelEndpoints } from './checks.ts';

/** The server of the AsyncAPI document whose channel gets the callback options. */
const CALLBACK_SERVER = 'notifyUrl';

export interface ReceiverTargetDeps {
  /** The channels to check (default: every channel of generated/asyncapi/webhooks.json). */
  channels?: ChannelSpec[];
  now?: () => number;
  env?: NodeJS.ProcessEnv;
}

export function createReceiverTarget(deps: ReceiverTargetDeps = {}): Target {
  return {
    name: 'receiver',
    summary: "replays signed events at a merchant's webhook receiver and checks its answers",
    implemented: true,
    synopsis: 'receiver --url URL --secret S [--scheme service-signature|standard-webhooks] [--previous-secret P] [--timeout-ms 10000] [options]',
    description: `
Every message of the AsyncAPI document (spec/webhooks.asyncapi.yaml) is POSTed to the
receiver the way the service sends it: Content-Type, Service-Event-Id, Service-Signature with
a fresh t, User-Agent, compact JSON body. The documented examples and seeded variations
(values drawn within the schemas) must get a 2xx; the same event delivered twice must get a
2xx both times; requests that break a verification rule (a body changed after signing,
another secret, t more than ${TOLERANCE_SECONDS} s away, a malformed or missing signature, an event id header
that is not the body id) must not. Each verification rule is also checked to the letter: bodies
in other valid JSON forms signed over their exact bytes, the whole digest (not a prefix, no
extra characters), t exactly ${TOLERANCE_SECONDS} s away, createdAt against t, event ids compared exactly,
header names in any case. The summary ends with the rules the run covered.

A secret can be given as env:NAME to read it from the environment variable NAME (keeps it out
of the shell history). Secrets are never printed. The timestamp checks assume the receiver's
clock is within a few seconds of this machine's.`,
    options: {
      url: { type: 'string', value: 'URL', description: 'the receiver of order webhooks (and webhook.test)' },
      secret: { type: 'string', value: 'S', description: "the endpoint's signing secret (whsec_...)" },
      'previous-secret': {
        type: 'string',
        value: 'P',
        description: 'the secret before the last rotation: also checks that a request signed with it is accepted (in both schemes)',
      },
      'callback-url': {
        type: 'string',
        value: 'URL',
        description: 'the receiver of the payout-completed callback (a payout\'s notifyUrl)',
        defaultText: '--url',
      },
      'callback-secret': {
        type: 'string',
        value: 'S',
        description: "the tenant environment's callback secret",
        defaultText: '--secret',
      },
      'previous-callback-secret': {
        type: 'string',
        value: 'P',
        description: 'the callback secret before its last rotation',
        defaultText: '--previous-secret when --callback-secret is not given',
      },
      scheme: {
        type: 'string',
        value: 'S',
        description:
          "the endpoint's signature scheme: service-signature, or standard-webhooks to check the receiver by the rules of Standard Webhooks v1.0.0 " +
          '(webhook-id, webhook-timestamp, webhook-signature; --secret with or without whsec_); payout callbacks are Service-Signature and not sent then',
        defaultText: 'service-signature',
      },
      'skip-callback': { type: 'boolean', description: 'do not check the payout-completed callback (no payouts with a notifyUrl)' },
      'timeout-ms': {
        type: 'string',
        value: 'N',
        description: 'how long to wait for each answer, as the service does',
        defaultText: '10000',
      },
      variations: {
        type: 'string',
        value: 'N',
        description: 'generated variations delivered per message, besides the documented examples',
        defaultText: '3',
      },
    },
    async prepare(values, ctx) {
      const env = deps.env ?? process.env;
      const url = urlOption(values, 'url', true);
      const secret = secretOption(values, 'secret', env, true);
      const previousSecret = secretOption(values, 'previous-secret', env, false);
      const callbackUrl = urlOption(values, 'callback-url', false) ?? url;
      const explicitCallbackSecret = secretOption(values, 'callback-secret', env, false);
      const callbackSecret = explicitCallbackSecret ?? secret;
      const previousCallbackSecret =
        secretOption(values, 'previous-callback-secret', env, false) ?? (explicitCallbackSecret === undefined ? previousSecret : undefined);
      const timeoutMs = integerOption(values, 'timeout-ms', 10_000, 100, 600_000);
      const variations = integerOption(values, 'variations', 3, 0, 1000);
      const skipCallback = values['skip-callback'] === true;

      const channels = deps.channels ?? webhookChannels();
      const scheme = optionalString(values, 'scheme') ?? 'service-signature';
      if (scheme === 'standard-webhooks') {
        if (!isStandardSecret(secret)) throw new UsageError('--secret is not a Standard Webhooks secret: whsec_ (optional) followed by base64');
        const orders = channels.filter((c) => !c.serverNames.includes(CALLBACK_SERVER));
        const callbackOptions = ['callback-url', 'callback-secret', 'previous-callback-secret'].filter((name) => values[name] !== undefined);
        if (callbackOptions.length > 0) {
          throw new UsageError(`${callbackOptions.map((n) => `--${n}`).join(', ')} do not apply with --scheme standard-webhooks: payout callbacks are always Service-Signature; check them in a run without --scheme`);
        }
        if (previousSecret !== undefined && !isStandardSecret(previousSecret)) throw new UsageError('--previous-secret is not a Standard Webhooks secret: whsec_ (optional) followed by base64');
        const endpoint = { url: url.href, secret, ...(previousSecret ? { previousSecret } : {}) };
        return {
          checks: orders.flatMap((channel) => standardReceiverChecks({ channel, endpoint, seed: ctx.seed, timeoutMs, ...(deps.now ? { now: deps.now } : {}) })),
          notes: [
            `${orders.map((c) => c.id).join(', ')} → POST ${url.href}, Standard Webhooks headers; payout callbacks are Service-Signature and not sent`,
            previousSecret ? 'previous secret given: rotation is checked' : 'no --previous-secret: the rotation check is not reached',
          ],
          catalogue: STANDARD_CATALOGUE,
        };
      }
      if (scheme !== 'service-signature') throw new UsageError(`--scheme must be service-signature or standard-webhooks, not ${scheme}`);
      const endpoints: ChannelEndpoints = {};
      const notes: string[] = [];
      for (const channel of channels) {
        const isCallback = channel.serverNames.includes(CALLBACK_SERVER);
        if (isCallback && skipCallback) {
          endpoints[channel.id] = { skip: '--skip-callback was given' };
          notes.push(`${channel.id}: skipped (--skip-callback)`);
          continue;
        }
        const endpoint = isCallback
          ? { url: callbackUrl.href, secret: callbackSecret, ...(previousCallbackSecret ? { previousSecret: previousCallbackSecret } : {}) }
          : { url: url.href, secret, ...(previousSecret ? { previousSecret } : {}) };
        endpoints[channel.id] = endpoint;
        notes.push(
          `${channel.id} (${channel.messages.map((m) => m.name).join(', ')}) → POST ${endpoint.url}` +
            (endpoint.previousSecret ? ', previous secret given: rotation is checked' : ''),
        );
      }
      return {
        checks: receiverChecks({
          channels,
          endpoints,
          seed: ctx.seed,
          variations,
          timeoutMs,
          ...(deps.now ? { now: deps.now } : {}),
        }),
        notes,
        catalogue: RECEIVER_CATALOGUE,
      };
    },
  };
}

function secretOption(values: OptionValues, name: string, env: NodeJS.ProcessEnv, required: true): string;
function secretOption(values: OptionValues, name: string, env: NodeJS.ProcessEnv, required: false): string | undefined;
function secretOption(values: OptionValues, name: string, env: NodeJS.ProcessEnv, required: boolean): string | undefined {
  let value = optionalString(values, name);
  if (value === undefined) {
    if (required) throw new UsageError(`--${name} is required`);
    return undefined;
  }
  if (value.startsWith('env:')) {
    const variable = value.slice(4);
    const fromEnv = env[variable];
    if (!fromEnv) throw new UsageError(`--${name} names the environment variable ${variable}, which is not set`);
    value = fromEnv;
  }
  if (secretByteLength(value) < MIN_SECRET_BYTES) {
    throw new UsageError(`--${name} is shorter than ${MIN_SECRET_BYTES} bytes; give the whole secret shown by the service (whsec_...)`);
  }
  return value;
}
