// Command-line arguments of `payments-webhooks`: `listen` and `trigger`, their options, and the
// environment variables that stand in for the credentials (so the secret need not be typed
// where the shell history keeps it).
import { parseArgs } from 'node:util';
import { ROUTABLE_EVENT_TYPES } from '../../generated/vocabulary.ts';
import { defaultStatePath } from './state.ts';

/** The event types an endpoint can subscribe to (the contract's routable messages), and webhook.test. */
export const TRIGGER_EVENTS = [...ROUTABLE_EVENT_TYPES, 'webhook.test'] as const;
export type TriggerEvent = (typeof TRIGGER_EVENTS)[number];
/** What `trigger` can cause: the operational events (webhook_endpoint.*) are the service's own, raised when an endpoint fails. */
export type TriggerableEvent = Exclude<TriggerEvent, `webhook_endpoint.${string}`>;

export interface Connection {
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
}

/** Where `listen` forwards: a URL per event type, and a default for the others (null: none). */
export interface Routes {
  fallback: string | null;
  byType: Partial<Record<TriggerEvent, string>>;
}

export interface ListenArgs extends Connection {
  command: 'listen';
  routes: Routes;
  /** Event types to stream; empty: all. */
  events: TriggerEvent[];
  /** The signing secret to use instead of the saved or a new one (--secret or PAYMENTS_WEBHOOK_SECRET); never saved. */
  secret: string | null;
  /** The cursor file instead of the default one under the user's cache folder. */
  statePath: string | null;
  /** Open the session, print its signing secret alone and exit (for CI). */
  printSecret: boolean;
}

export interface TriggerArgs extends Connection {
  command: 'trigger';
  event: TriggerableEvent;
  /** `--set path=value` overrides of the event's example data, in order. */
  sets: Array<{ path: string; value: string }>;
  /** `--data '{...}'`: an object merged over the event's example data. */
  data: string | null;
}

/** `resend <id>`: one event kept by `listen`, forwarded again. */
export interface ResendArgs {
  command: 'resend';
  /** The event id or its first characters as printed. */
  id: string;
  statePath: string;
  /** Forward there instead of where `listen` forwarded it. */
  routes: Routes | null;
  secret: string | null;
}

export type Args = ListenArgs | TriggerArgs | ResendArgs | { command: 'help' };

export const DEFAULT_BASE_URL = 'http://localhost:8080';

export const USAGE = `Usage:
  payments-webhooks listen --forward-to <url> [--forward-to <type>=<url> ...] [options]
      Forwards every new event of the key's test environment to <url> (an event type with
      a URL of its own to that one), signed as the service signs webhooks; one line per event.
      A failed forward is tried again a few times with back-off; the last events are kept
      for resend.
  payments-webhooks listen --print-secret [options]
      Opens the session (events from now on are kept for the next listen), prints its
      signing secret alone and exits: for CI.
  payments-webhooks resend <event id> [options]
      Forwards an event listen forwarded again (same id, signed anew), to the URL it went
      to or to --forward-to.
  payments-webhooks trigger <event> [--set <path>=<value> ...] [--data <json>] [options]
      Causes <event> in the test environment through the sandbox:
      ${TRIGGER_EVENTS.join(' | ')}
      --set data.merchantReference=cart-1 or --data '{"amountMinor":1250}' change the
      example's data, checked against the event's schema.

Options:
  --api-key <key>       test API key (x-api-key); or PAYMENTS_API_KEY
  --api-secret <hash>   its secret (x-api-hash); or PAYMENTS_API_SECRET
  --base-url <url>      service URL; or PAYMENTS_BASE_URL (default ${DEFAULT_BASE_URL})
  --events <a,b>        listen: forward only these event types
  --secret <whsec_...>  listen, resend: sign with this secret instead of the session secret;
                        or PAYMENTS_WEBHOOK_SECRET
  --state <file>        listen, resend: where the resume cursor and the last events are kept
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
      'forward-to': { type: 'string', multiple: true },
      'print-secret': { type: 'boolean' },
      events: { type: 'string' },
      secret: { type: 'string' },
      state: { type: 'string' },
      set: { type: 'string', multiple: true },
      data: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === 'help') return { command: 'help' };
  const baseUrl = (): string => httpUrl(values['base-url'] ?? env.PAYMENTS_BASE_URL ?? DEFAULT_BASE_URL, '--base-url').replace(/\/+$/, '');
  const apiKey = (): string => required(values['api-key'] ?? env.PAYMENTS_API_KEY, '--api-key (or PAYMENTS_API_KEY)');
  const connection = (): Connection => ({
    baseUrl: baseUrl(),
    apiKey: apiKey(),
    apiSecret: required(values['api-secret'] ?? env.PAYMENTS_API_SECRET, '--api-secret (or PAYMENTS_API_SECRET)'),
  });
  const secret = values.secret ?? (env.PAYMENTS_WEBHOOK_SECRET || undefined) ?? null;
  if (command === 'listen') {
    if (rest.length > 0) throw new UsageError(`listen takes no argument: ${rest.join(' ')}`);
    const printSecret = values['print-secret'] ?? false;
    const routes = routesOf(values['forward-to'] ?? []);
    if (!printSecret && routes === null) throw new UsageError('--forward-to is required');
    const events = values.events === undefined ? [] : values.events.split(',').map((e) => eventType(e.trim()));
    return { command, ...connection(), routes: routes ?? { fallback: null, byType: {} }, events: printSecret ? events : streamedTypes(routes!, events), secret, statePath: values.state ?? null, printSecret };
  }
  if (command === 'resend') {
    if (rest.length !== 1) throw new UsageError('resend takes one event id');
    return { command, id: rest[0]!, statePath: values.state ?? defaultStatePath(baseUrl(), apiKey(), env), routes: routesOf(values['forward-to'] ?? []), secret };
  }
  if (command === 'trigger') {
    if (rest.length !== 1) throw new UsageError(`trigger takes one event: ${TRIGGER_EVENTS.join(' | ')}`);
    return { command, ...connection(), event: triggerable(eventType(rest[0]!)), sets: (values.set ?? []).map(assignment), data: values.data ?? null };
  }
  throw new UsageError(`unknown command: ${command}`);
}

/** `--forward-to <url>` (the default) and `--forward-to <type>=<url>`; null when none is given. */
function routesOf(values: readonly string[]): Routes | null {
  if (values.length === 0) return null;
  const routes: Routes = { fallback: null, byType: {} };
  for (const value of values) {
    const typed = /^([a-z_.]+)=(.*)$/.exec(value);
    if (typed) {
      const type = eventType(typed[1]!);
      if (routes.byType[type] !== undefined) throw new UsageError(`--forward-to ${type} is given twice`);
      routes.byType[type] = httpUrl(typed[2]!, `--forward-to ${type}`);
    } else {
      if (routes.fallback !== null) throw new UsageError('--forward-to <url> without an event type is given twice');
      routes.fallback = httpUrl(value, '--forward-to');
    }
  }
  return routes;
}

/** The types to stream: --events (each must have a URL), else every type when there is a default URL, else the routed ones. */
function streamedTypes(routes: Routes, events: TriggerEvent[]): TriggerEvent[] {
  const unrouted = events.filter((e) => routes.fallback === null && routes.byType[e] === undefined);
  if (unrouted.length > 0) throw new UsageError(`no --forward-to for ${unrouted.join(', ')}`);
  if (events.length > 0 || routes.fallback !== null) return events;
  return TRIGGER_EVENTS.filter((e) => routes.byType[e] !== undefined);
}

/** The URL an event of this type goes to, or null. */
export function routeOf(routes: Routes, type: string): string | null {
  return routes.byType[type as TriggerEvent] ?? routes.fallback;
}

function assignment(value: string): { path: string; value: string } {
  const at = value.indexOf('=');
  if (at <= 0) throw new UsageError(`--set takes <path>=<value>: ${value}`);
  return { path: value.slice(0, at), value: value.slice(at + 1) };
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

function triggerable(e: TriggerEvent): TriggerableEvent {
  if (e.startsWith('webhook_endpoint.')) throw new UsageError(`${e} is raised by the service when an endpoint fails; listen shows it, trigger cannot cause it`);
  return e as TriggerableEvent;
}

function eventType(value: string): TriggerEvent {
  const found = TRIGGER_EVENTS.find((e) => e === value);
  if (!found) throw new UsageError(`unknown event type: ${value} (one of ${TRIGGER_EVENTS.join(', ')})`);
  return found;
}
