// npm run admin -- <command>: provisioning from the command line. Prints one JSON object;
// secrets in it are shown once.
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { createApiKey, createMember, createServiceAccount, createTenant, endMemberSessions, revokeApiKey, setMemberActive } from '../domain/admin.ts';
import { isAppError } from '../domain/errors.ts';
import { listMemberPasskeys, revokeMemberPasskeys } from '../domain/passkeys.ts';
import { DEFAULT_RESEAL_BATCH, keyIdsOf, MAX_RESEAL_BATCH, resealSecrets, sealingCensus } from '../domain/secrets-rotation.ts';
import { openServices } from '../services.ts';
import { instancesCommand, migrateCommand } from './upgrade.ts';
import { MEMBER_ROLES } from '../../generated/vocabulary.ts';
import { ALL_PERMISSIONS, type EnvironmentName, type MemberRole, type Permission } from '../domain/model.ts';

interface Command {
  usage: string;
  options: Record<string, { type: 'string' | 'boolean'; description: string; required?: boolean }>;
  run(values: Record<string, string | boolean | undefined>): Promise<unknown>;
}

const ROLES: readonly MemberRole[] = MEMBER_ROLES;

/** The options that name one member: every `member …` command but `create` takes them. */
const MEMBER = {
  tenant: { type: 'string', description: 'tenant id', required: true },
  member: { type: 'string', description: 'member id', required: true },
} as const;

const commands: Record<string, Command> = {
  'tenant create': {
    usage: 'tenant create --name NAME [--admin-email EMAIL]',
    options: {
      name: { type: 'string', description: 'the tenant (merchant) name', required: true },
      'admin-email': { type: 'string', description: "the administrator member's e-mail" },
    },
    run: (v) => withServices((s) => createTenant(s, { name: String(v.name), ...(v['admin-email'] ? { adminEmail: String(v['admin-email']) } : {}) })),
  },
  'key create': {
    usage: 'key create --tenant ID --environment test|live [--permissions a,b,...] [--label TEXT]',
    options: {
      tenant: { type: 'string', description: 'tenant id', required: true },
      environment: { type: 'string', description: 'test or live', required: true },
      permissions: { type: 'string', description: `comma-separated, default all: ${ALL_PERMISSIONS.join(',')}` },
      label: { type: 'string', description: 'a note to recognise the key by' },
    },
    run: (v) => {
      const environment = String(v.environment);
      if (environment !== 'test' && environment !== 'live') throw new UsageError('--environment must be test or live');
      const permissions = v.permissions ? String(v.permissions).split(',').map((p) => p.trim()).filter(Boolean) : [...ALL_PERMISSIONS];
      return withServices((s) =>
        createApiKey(s, {
          tenantId: String(v.tenant),
          environment: environment as EnvironmentName,
          permissions: permissions as Permission[],
          ...(v.label ? { label: String(v.label) } : {}),
        }),
      );
    },
  },
  'key revoke': {
    usage: 'key revoke --tenant ID --key KEY',
    options: {
      tenant: { type: 'string', description: 'tenant id', required: true },
      key: { type: 'string', description: 'the API key (x-api-key value) to revoke', required: true },
    },
    // Running instances refuse the key within AUTH_CACHE_TTL_MS (their cache of verified credentials).
    run: (v) => withServices((s) => revokeApiKey(s, { tenantId: String(v.tenant), apiKey: String(v.key) })),
  },
  'member create': {
    usage: 'member create --tenant ID --email EMAIL --role administrator|developer|viewer [--inactive]',
    options: {
      tenant: { type: 'string', description: 'tenant id', required: true },
      email: { type: 'string', description: "the member's e-mail", required: true },
      role: { type: 'string', description: ROLES.join(', '), required: true },
      inactive: { type: 'boolean', description: 'create the member inactive' },
    },
    run: (v) => {
      if (!ROLES.includes(String(v.role) as MemberRole)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
      return withServices((s) => createMember(s, { tenantId: String(v.tenant), email: String(v.email), role: String(v.role) as MemberRole, active: v.inactive !== true }));
    },
  },
  'member deactivate': {
    usage: 'member deactivate --tenant ID --member ID',
    options: {
      ...MEMBER,
    },
    run: (v) =>
      withServices(async (s) => {
        await setMemberActive(s, { tenantId: String(v.tenant), memberId: String(v.member), active: false });
        return { memberId: v.member, active: false };
      }),
  },
  'member sessions end': {
    usage: 'member sessions end --tenant ID --member ID',
    options: {
      ...MEMBER,
    },
    // Takes effect at once on every instance: the session epoch is read on every portal request.
    run: (v) => withServices((s) => endMemberSessions(s, { tenantId: String(v.tenant), memberId: String(v.member) })),
  },
  'member passkeys list': {
    usage: 'member passkeys list --tenant ID --member ID',
    options: {
      ...MEMBER,
    },
    run: (v) => withServices((s) => listMemberPasskeys(s, { tenantId: String(v.tenant), memberId: String(v.member) })),
  },
  'member passkeys revoke': {
    usage: 'member passkeys revoke --tenant ID --member ID (--passkey ID | --all)',
    options: {
      ...MEMBER,
      passkey: { type: 'string', description: 'the passkey id (pky_…) to revoke, from `member passkeys list`' },
      all: { type: 'boolean', description: "revoke every passkey of the member (a lost device, or a member's access reset)" },
    },
    // Takes effect at once on every instance: a passkey is looked up on every use.
    run: (v) => {
      if ((v.passkey === undefined) === (v.all !== true)) throw new UsageError('give exactly one of --passkey ID and --all');
      return withServices((s) => revokeMemberPasskeys(s, { tenantId: String(v.tenant), memberId: String(v.member), passkeyId: v.all === true ? null : String(v.passkey) }));
    },
  },
  migrate: {
    usage: 'migrate [--contract]',
    options: {
      contract: { type: 'boolean', description: 'also apply contract migrations (PostgreSQL: refused while an instance running older code is alive)' },
    },
    run: (v) => migrateCommand(config, v.contract === true),
  },
  instances: {
    usage: 'instances',
    options: {},
    // PostgreSQL: the instances alive (heartbeat within the TTL) and whether each runs older code than this.
    run: () => instancesCommand(config),
  },
  'service-account create': {
    usage: 'service-account create --tenant ID --email EMAIL',
    options: {
      tenant: { type: 'string', description: 'tenant id', required: true },
      email: { type: 'string', description: 'the e-mail refunds are sent to', required: true },
    },
    run: (v) => withServices((s) => createServiceAccount(s, { tenantId: String(v.tenant), email: String(v.email) })),
  },
  'secrets status': {
    usage: 'secrets status',
    options: {},
    // Key ids only, never a key: how many sealed values each key of SECRETS_KEY's ring seals.
    run: () => withServices(async (s) => ({ newestKeyId: keyIdsOf(s.secrets)[0], sealedBy: (await sealingCensus(s.store, keyIdsOf(s.secrets))).sealedBy })),
  },
  'secrets reseal': {
    usage: `secrets reseal [--batch N]`,
    options: {
      batch: { type: 'string', description: `values re-sealed per transaction, 1 to ${MAX_RESEAL_BATCH} (default ${DEFAULT_RESEAL_BATCH})` },
    },
    // Safe while the service runs, and to run again: each batch commits on its own, and a value
    // a merchant rotated meanwhile is left as the rotation wrote it (changedMeanwhile).
    run: (v) => {
      const batch = v.batch === undefined ? DEFAULT_RESEAL_BATCH : Number(v.batch);
      if (!Number.isInteger(batch) || batch < 1 || batch > MAX_RESEAL_BATCH) throw new UsageError(`--batch must be a whole number from 1 to ${MAX_RESEAL_BATCH}`);
      return withServices((s) => resealSecrets(s, { batch }));
    },
  },
};

class UsageError extends Error {}

/** Settings, checked before a command opens anything (main). */
let config: Config;

async function withServices<T>(fn: (s: Awaited<ReturnType<typeof openServices>>['services']) => Promise<T>): Promise<T> {
  // openServices closes the store itself when opening or migrating fails.
  const { services } = await openServices(config, pino({ level: 'silent' }));
  try {
    return await fn(services);
  } finally {
    await services.store.close();
  }
}

function help(): string {
  return `usage: npm run admin -- <command> [options]\n\ncommands:\n${Object.values(commands)
    .map((c) => `  ${c.usage}`)
    .join('\n')}\n\nSettings (DATA_DIR, DATABASE_URL, SECRETS_KEY) come from the environment, as for npm start.\nAdd --help after a command for its options.\n`;
}

function commandHelp(name: string, c: Command): string {
  const opts = Object.entries(c.options)
    .map(([k, o]) => `  --${k.padEnd(14)} ${o.description}${o.required ? ' (required)' : ''}`)
    .join('\n');
  return `usage: npm run admin -- ${c.usage}\n\n${opts}\n`;
}

async function main(argv: string[]): Promise<number> {
  // Commands are one word (migrate), two, or three (member passkeys list).
  const name = [3, 2, 1].map((n) => argv.slice(0, n).join(' ')).find((n) => commands[n] !== undefined) ?? argv.slice(0, 2).join(' ');
  const command = commands[name];
  if (!command) {
    const wantsHelp = argv.length === 0 || argv.includes('--help') || argv.includes('-h');
    (wantsHelp ? process.stdout : process.stderr).write(wantsHelp ? help() : `unknown command: ${argv.join(' ')}\n\n${help()}`);
    return wantsHelp ? 0 : 2;
  }
  const rest = argv.slice(name.split(' ').length);
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(commandHelp(name, command));
    return 0;
  }
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: rest, options: Object.fromEntries(Object.entries(command.options).map(([k, o]) => [k, { type: o.type }])), strict: true }).values;
    const missing = Object.entries(command.options).filter(([k, o]) => o.required && values[k] === undefined);
    if (missing.length > 0) throw new UsageError(`missing ${missing.map(([k]) => `--${k}`).join(', ')}`);
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n\n${commandHelp(name, command)}`);
    return 2;
  }
  try {
    config = loadConfig();
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`configuration error: ${e.message}\n`);
    return 2;
  }
  try {
    const result = await command.run(values);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`${e.message}\n\n${commandHelp(name, command)}`);
      return 2;
    }
    if (e instanceof ConfigError) {
      process.stderr.write(`configuration error: ${e.message}\n`);
      return 2;
    }
    process.stderr.write(`${isAppError(e) ? e.detail : `failed: ${(e as Error).message}`}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
