// The command line of `npm run mock`: its options (node:util parseArgs, strict), the usage text
// that --help prints and a wrong option follows, and the settings they override.
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { parseArgs } from 'node:util';
import { SettingError, portSetting, positiveIntSetting } from '../lib/settings.ts';

export const USAGE = `usage: npm run mock -- [options]
       npm run mock -- send <event> --to URL [--secret whsec_...|env:NAME] [--example NAME] [--new-id]

The contract's stand-in on one base URL. Stateless by default: the documented examples (Prism),
invalid requests refused as the server refuses them. --stateful: the reference server itself.

options:
  --port N           the port (default MOCK_PORT, else 4010)
  --host H           the interface (default MOCK_HOST, else 127.0.0.1); any other than a
                     loopback one is warned about: POST /_mock/webhooks is an open relay
  --quiet            no line per answered request (refusals are still logged, with their reason)
  --stateful         the reference server on a SQLite store: what is written can be read back
  --tenants N        --stateful: N test tenants (default 1), their credentials in the tenants file
  --tenants-file F   --stateful: also write the tenants' credentials (JSON) to F
  --state DIR        --stateful: keep the store, its secrets and the tenants file in DIR across
                     restarts (default: a temporary folder, removed at every exit); a new DIR
                     is made owner-only (0700) with a .gitignore that ignores all of it
  -h, --help         this text

settings (environment):
  MOCK_PORT, MOCK_HOST       the base URL's port and interface
  MOCK_WEBHOOK_SECRET        signs POST /_mock/webhooks calls that name no secret
  MOCK_CALLBACK_SECRET       stateless: signs the payout callbacks; --stateful: tenant 1's callback secret
  MOCK_TENANT_ID, MOCK_API_KEY + MOCK_API_HASH, MOCK_MEMBER_TOKEN
                             --stateful: tenant 1's credentials (pinned; generated when unset)
  MOCK_ENDPOINT_URL + MOCK_ENDPOINT_SECRET [+ MOCK_ENDPOINT_SCHEME]
                             --stateful only: tenant 1's test webhook endpoint, at that URL and
                             signed with that secret (whsec_..., e.g. whsec_$(openssl rand -hex 22))
                             at every start; scheme service-signature, standard-webhooks or both
  --stateful also reads the server's settings of docs/operations.md that suit development:
  WEBHOOK_ALLOW_INSECURE_URLS (default true), WEBHOOK_RETRY_SCALE, RATE_LIMIT_RPS,
  AUTH_CACHE_TTL_MS, LIST_CACHE_MB, REQUEST_DEADLINE_MS, SHUTDOWN_GRACE_MS, VALIDATE_RESPONSES,
  CHECK_NESTED_TRANSACTIONS, RETENTION_LIVE, RETENTION_TEST, IDEMPOTENCY_KEY_RETENTION, PRUNER,
  PRUNE_INTERVAL, PRUNE_BATCH, PRUNE_PAUSE, PRUNE_BUSY_SHARE, SECRETS_KEY, METRICS_TOKEN,
  DOCS_DIR, LOG_LEVEL (default warn)

docs/mock.md has the details.`;

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  quiet: { type: 'boolean' },
  stateful: { type: 'boolean' },
  tenants: { type: 'string' },
  'tenants-file': { type: 'string' },
  state: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The settings that pin tenant 1's test webhook endpoint: --stateful only (stateful.ts reads them). */
export const ENDPOINT_SETTINGS = ['MOCK_ENDPOINT_URL', 'MOCK_ENDPOINT_SCHEME', 'MOCK_ENDPOINT_SECRET'] as const;

/** The stateless mock's one line about the stateful-only settings that are set; null when none is. */
export function statelessWarning(env: NodeJS.ProcessEnv): string | null {
  const set = ENDPOINT_SETTINGS.filter((name) => env[name]);
  return set.length === 0 ? null : `npm run mock: ${set.join(', ')} ${set.length === 1 ? 'applies' : 'apply'} to --stateful only: ignored (the stateless mock keeps no webhook endpoint)`;
}

/** 127.0.0.0/8 and ::1 (an IPv4-mapped ::ffff:127.x.y.z is checked as its IPv4 address). */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** True when `host` is reachable from this machine only: a loopback address or a localhost name (RFC 6761). */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (isIPv4(name)) return LOOPBACK.check(name, 'ipv4');
  return isIPv6(name) && LOOPBACK.check(name, 'ipv6');
}

/**
 * The start-up warning when the mock listens beyond this machine, null on a loopback host:
 * POST /_mock/webhooks takes no credentials and sends a signed request to any URL it is
 * given, so on a reachable interface it is an open relay for whoever can reach the port.
 */
export function relayWarning(host: string): string | null {
  if (isLoopbackHost(host)) return null;
  return (
    `npm run mock: warning: listening on ${host}, not a loopback address: POST /_mock/webhooks takes no credentials and sends ` +
    'requests to any URL it is given, for anyone who can reach this port (an open relay); use --host 127.0.0.1 unless other machines must reach the mock'
  );
}

/** The option names, as --help lists them (a test checks that the docs name each). */
export const OPTION_NAMES = Object.keys(OPTIONS);

export interface MockCommand {
  help: boolean;
  port: number;
  host: string;
  quiet: boolean;
  stateful: boolean;
  tenants: number;
  tenantsFile: string | null;
  stateDir: string | null;
}

/** The command line and the environment as one command; a SettingError says what is wrong. */
export function parseMockCommand(args: string[], env: NodeJS.ProcessEnv): MockCommand {
  let values;
  try {
    ({ values } = parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: false }));
  } catch (err) {
    // parseArgs' own message (an unknown option, a missing value, a stray argument), first line only.
    throw new SettingError(((err as Error).message.split('\n')[0] ?? '').trim());
  }
  const statefulOnly = (['tenants', 'tenants-file', 'state'] as const).filter((name) => values[name] !== undefined);
  if (!values.stateful && statefulOnly.length > 0) throw new SettingError(`--${statefulOnly[0]} needs --stateful`);
  return {
    help: values.help ?? false,
    port: values.port !== undefined ? portSetting('--port', values.port, 4010) : portSetting('MOCK_PORT', env.MOCK_PORT, 4010),
    host: values.host ?? env.MOCK_HOST ?? '127.0.0.1',
    quiet: values.quiet ?? false,
    stateful: values.stateful ?? false,
    tenants: values.tenants === undefined ? 1 : positiveIntSetting('--tenants', values.tenants),
    tenantsFile: values['tenants-file'] ?? null,
    stateDir: values.state ?? null,
  };
}
