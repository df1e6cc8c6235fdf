// Command-line arguments of `payments-webhooks`: `listen` and `trigger`, their options, and the
// environment variables that stand in for the credentials (so the secret need not be typed
// where the shell history keeps it).
import { parseArgs } from 'node:util';

export const TRIGGER_EVENTS = ['order.created', 'order.paid', 'order.payment_review_required', 'webhook.test'] as const;
export type TriggerEvent = (typeof TRIGGER_EVENTS)[number];

export interface Connection {
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
}

export interface ListenArgs extends Connection {
  command: 'listen';
  forwardTo: string;
  /** Event types to forward; empty: all. */
  events: TriggerEvent[];
  /** The signing secret to use instead of the saved or a new one. */
  secret: string | null;
  /** The cursor file instead of the default one under the user's cache folder. */
  statePath: string | null;
}

export interface TriggerArgs extends Connection {
  command: 'trigger';
  event: TriggerEvent;
}

export type Args = ListenArgs | TriggerArgs | { command: 'help' };

export const DEFAULT_BASE_URL = 'http://localhost:8080';

export const USAGE = `Usage:
  payments-webhooks listen --forward-to <url> [options]
      Forwards every new event of the key's test environment to <url>, signed as the
      service signs webhooks, and prints one line per event.
  payments-webhooks trigger <event> [options]
      Causes <event> in the test environment through the sandbox:
      ${TRIGGER_EVENTS.join(' | ')}

Options:
  --api-key <key>       test API key (x-api-key); or PAYMENTS_API_KEY
  --api-secret <hash>   its secret (x-api-hash); or PAYMENTS_API_SECRET
  --base-url <url>      service URL; or PAYMENTS_BASE_URL (default ${DEFAULT_BASE_URL})
  --events <a,b>        listen: forward only these event types
  --secret <whsec_...>  listen: sign with this secret instead of the session secret
  --state <file>        listen: where the resume cursor is kept
  -h, --help            this text
`;

/** Thrown for arguments that cannot be used; its message is shown with the usage. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function parseCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): Args {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      'api-key': { type: 'string' },
      'api-secret': { type: 'string' },
      'base-url': { type: 'string' },
      'forward-to': { type: 'string' },
      events: { type: 'string' },
      secret: { type: 'string' },
      state: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === 'help') return { command: 'help' };
  const connection = (): Connection => ({
    baseUrl: httpUrl(values['base-url'] ?? env.PAYMENTS_BASE_URL ?? DEFAULT_BASE_URL, '--base-url').replace(/\/+$/, ''),
    apiKey: required(values['api-key'] ?? env.PAYMENTS_API_KEY, '--api-key (or PAYMENTS_API_KEY)'),
    apiSecret: required(values['api-secret'] ?? env.PAYMENTS_API_SECRET, '--api-secret (or PAYMENTS_API_SECRET)'),
  });
  if (command === 'listen') {
    if (rest.length > 0) throw new UsageError(`listen takes no argument: ${rest.join(' ')}`);
    return {
      command,
      ...connection(),
      forwardTo: httpUrl(required(values['forward-to'], '--forward-to'), '--forward-to'),
      events: values.events === undefined ? [] : values.events.split(',').map((e) => eventType(e.trim())),
      secret: values.secret ?? null,
      statePath: values.state ?? null,
    };
  }
  if (command === 'trigger') {
    if (rest.length !== 1) throw new UsageError(`trigger takes one event: ${TRIGGER_EVENTS.join(' | ')}`);
    return { command, ...connection(), event: eventType(rest[0]!) };
  }
  throw new UsageError(`unknown command: ${command}`);
}

function required(value: string | undefined, name: string): string {
  if (value === undefined || value === '') throw new UsageError(`${name} is required`);
  return value;
}

function httpUrl(value: string, name: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${name} is not a URL: ${value}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${name} must be an http or https URL: ${value}`);
  return value;
}

function eventType(value: string): TriggerEvent {
  const found = TRIGGER_EVENTS.find((e) => e === value);
  if (!found) throw new UsageError(`unknown event type: ${value} (one of ${TRIGGER_EVENTS.join(', ')})`);
  return found;
}
