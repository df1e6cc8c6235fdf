// npm run mock: the contract's stand-in on one base URL (MOCK_HOST:MOCK_PORT, default
// 127.0.0.1:4010): every operation of the four OpenAPI documents, answered by Prism from the
// documented examples behind a front that refuses invalid requests with the contract's own
// errors, plus mocked webhooks. docs/mock.md describes it.
//
// Its options and settings: `npm run mock -- --help` (mock/cli.ts). `--stateful` serves the
// reference server instead (mock/stateful.ts); `send` sends one signed event and exits.
//
// Only what binding the port needs is imported up front: a port in use is said at once.
import { pathToFileURL } from 'node:url';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SettingError, checkSettings } from './lib/settings.ts';
import { USAGE, parseMockCommand, relayWarning, statelessWarning, type MockCommand } from './mock/cli.ts';
import { startMock } from './mock/start.ts';
import type { PinnedEndpointState } from './mock/stateful.ts';

export { startMock, type MockOptions, type RunningMock } from './mock/start.ts';

function secretArgument(value: string | undefined): string | undefined {
  if (value === undefined || !value.startsWith('env:')) return value;
  const fromEnv = process.env[value.slice(4)];
  if (!fromEnv) throw new Error(`--secret names ${value.slice(4)}, which is not set`);
  return fromEnv;
}

async function send(args: string[]): Promise<number> {
  const [{ generateSecret }, { UnknownEventError, createMockSender, mockEvents, sendMockEvent }] = await Promise.all([import('../signing/signature.ts'), import('./mock/webhooks.ts')]);
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, strict: true, options: { to: { type: 'string' }, secret: { type: 'string' }, example: { type: 'string' }, 'new-id': { type: 'boolean' } } });
  } catch (err) {
    console.error(`npm run mock -- send: ${((err as Error).message.split('\n')[0] ?? '').trim()}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const events = mockEvents();
  const event = positionals[0];
  if (!event || !values.to) {
    console.error(`usage: npm run mock -- send <event> --to URL [--secret whsec_...|env:NAME] [--example NAME] [--new-id]\nevents: ${events.map((e) => `${e.name} (${e.examples.map((x) => x.name).join(', ')})`).join('; ')}`);
    return 2;
  }
  const given = secretArgument(values.secret);
  const secret = given ?? generateSecret();
  const sender = createMockSender();
  const options = { event, to: values.to, secret, ...(values.example ? { example: values.example } : {}), ...(values['new-id'] ? { newId: true } : {}) };
  let sent;
  try {
    sent = await sendMockEvent(sender, events, options);
  } catch (err) {
    if (!(err instanceof UnknownEventError || err instanceof RangeError)) throw err;
    console.error(`npm run mock -- send: ${err.message}`);
    return 2;
  } finally {
    await sender.close();
  }
  if (!given) console.log(`secret (give it to your receiver): ${secret}`);
  console.log(`${sent.event} (${sent.example}) Service-Event-Id ${sent.eventId} → ${values.to}: ${sent.status ?? `not delivered (${sent.error})`}`);
  return sent.status !== null && sent.status >= 200 && sent.status < 300 ? 0 : 1;
}

/** Stops `close` on SIGINT, SIGTERM or SIGHUP (a closed terminal), once: a signal can arrive twice (to the group, and relayed by npm). */
function closeOnSignal(close: () => Promise<void>): void {
  let closing: Promise<void> | null = null;
  const stop = (): void => {
    closing ??= close().then(() => process.exit(0));
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, stop);
}

async function serveStateful(command: MockCommand): Promise<void> {
  const { givenCredentials, pinnedEndpointSettings, startStatefulMock, CREDENTIAL_SETTINGS } = await import('./mock/stateful.ts');
  const given = checkSettings('npm run mock', () => givenCredentials(process.env));
  const endpoint = checkSettings('npm run mock', () => pinnedEndpointSettings(process.env));
  const log = (line: string): void => console.log(line);
  let mock;
  try {
    mock = await startStatefulMock({
      port: command.port,
      host: command.host,
      given,
      tenants: command.tenants,
      ...(command.stateDir === null ? {} : { stateDir: command.stateDir }),
      ...(command.tenantsFile === null ? {} : { tenantsFile: command.tenantsFile }),
      env: process.env,
      ...(endpoint === null ? {} : { endpoint }),
      ...(process.env.MOCK_WEBHOOK_SECRET ? { webhookSecret: process.env.MOCK_WEBHOOK_SECRET } : {}),
      refusals: log,
      ...(command.quiet ? {} : { access: log }),
    });
  } catch (err) {
    exitIfCannotListen(err, 'npm run mock', command.host, command.port);
    exitOnConfigError(err);
    exitOnSettingError(err);
    throw err;
  }
  const { stateDir, temporary } = mock;
  // Whatever ends the process short of SIGKILL, a temporary store (secrets.key included) goes with it.
  if (temporary) process.on('exit', () => rmSync(stateDir, { recursive: true, force: true }));
  const t = mock.tenant;
  console.log(`mock: ${mock.url}`);
  console.log(`mode: stateful, the reference server; store ${temporary ? `in a temporary folder, removed at exit: ${stateDir}` : `kept in ${stateDir}`}`);
  console.log(`docs: ${mock.url}/docs`);
  console.log(`tenants file: ${command.tenantsFile === null ? mock.tenantsFile : path.resolve(command.tenantsFile)} (${mock.tenants.length} tenant${mock.tenants.length === 1 ? '' : 's'}: keys, members, refund e-mail)`);
  console.log('tenant 1 (pin its credentials with these settings, e.g. in your .env):');
  const values: Record<keyof typeof CREDENTIAL_SETTINGS, string> = { MOCK_TENANT_ID: t.tenantId, MOCK_API_KEY: t.apiKey, MOCK_API_HASH: t.apiHash, MOCK_MEMBER_TOKEN: t.memberToken, MOCK_CALLBACK_SECRET: t.callbackSecret };
  for (const [name, value] of Object.entries(values)) console.log(`  ${name}=${value}`);
  if (mock.endpoint) console.log(pinnedEndpointLine(mock.endpoint));
  console.log(`webhook secret (POST /_mock/webhooks without "secret"): ${mock.webhookSecret}`);
  await printPaths();
  closeOnSignal(() => mock.close());
}

/** The banner's line on the pinned endpoint: its URL and what start-up did, never its secret. */
function pinnedEndpointLine(e: PinnedEndpointState): string {
  const done = { created: 'created', kept: "the state folder's, kept", updated: "the state folder's, its secret or scheme set", moved: `the state folder's, moved from ${e.previousUrl}` }[e.outcome];
  return `webhook endpoint of tenant 1 (test), pinned: ${e.url} (${e.id}, ${e.signatureScheme}), signed with MOCK_ENDPOINT_SECRET; ${done}`;
}

async function serveMock(command: MockCommand): Promise<void> {
  // Said before the port is bound, in both modes: both serve POST /_mock/webhooks.
  const relay = relayWarning(command.host);
  if (relay !== null) console.error(relay);
  if (command.stateful) return serveStateful(command);
  const { port, host } = command;
  const warning = statelessWarning(process.env);
  if (warning !== null) console.error(warning);
  let mock;
  try {
    mock = await startMock({
      port,
      host,
      ...(process.env.MOCK_WEBHOOK_SECRET ? { webhookSecret: process.env.MOCK_WEBHOOK_SECRET } : {}),
      ...(process.env.MOCK_CALLBACK_SECRET ? { callbackSecret: process.env.MOCK_CALLBACK_SECRET } : {}),
      ...(command.quiet ? {} : { log: (line: string) => console.log(line) }),
      refusals: (line: string) => console.log(line),
    });
  } catch (err) {
    exitIfCannotListen(err, 'npm run mock', host, port);
    throw err;
  }
  console.log(`mock: ${mock.url}`);
  console.log('mode: stateless, the documented examples (Prism); nothing is kept');
  console.log(`webhook secret (POST /_mock/webhooks without "secret"): ${mock.secrets.webhook}`);
  console.log(`callback secret (the payout's notifyUrl callback): ${mock.secrets.callback}`);
  await printPaths();
  closeOnSignal(() => mock.close());
}

/** Every path of the four documents, and the mock-only ones. */
async function printPaths(): Promise<void> {
  const { API_NAMES, loadOperations } = await import('../server/contract/operations.ts');
  console.log('paths:');
  for (const api of API_NAMES) {
    for (const op of loadOperations(api)) console.log(`  ${api.padEnd(12)} ${op.method.toUpperCase().padEnd(6)} ${op.path}`);
  }
  console.log(`  ${'mock-only'.padEnd(12)} POST   /_mock/webhooks  {"event": "order.paid", "to": "<url>", "secret"?: "whsec_..."}`);
  console.log(`  ${'mock-only'.padEnd(12)} GET    /_mock/webhooks  the events and their example names`);
}

/** A server setting the environment got wrong: one line, exit 2, as for the mock's own settings. */
function exitOnConfigError(err: unknown): void {
  if ((err as Error | null)?.name !== 'ConfigError') return;
  console.error(`npm run mock: ${(err as Error).message}`);
  process.exit(2);
}

/** A mock setting only the open store could check (MOCK_ENDPOINT_URL's destination): one line, exit 2. */
function exitOnSettingError(err: unknown): void {
  if (!(err instanceof SettingError)) return;
  console.error(`npm run mock: ${err.message}`);
  process.exit(2);
}

/** A port in use (or not allowed): one line naming it and the setting, and exit 1. */
export function exitIfCannotListen(err: unknown, command: string, host: string, port: number): void {
  const code = (err as { code?: unknown } | null)?.code;
  if (code !== 'EADDRINUSE' && code !== 'EACCES') return;
  const why = code === 'EADDRINUSE' ? 'is in use' : 'is not allowed';
  console.error(`${command}: cannot listen on ${host}:${port}: the port ${why}; stop what listens there or set MOCK_PORT to another port`);
  process.exit(1);
}

/** The command line, or: --help (the usage, exit 0); a wrong option or setting (one line, the usage, exit 2). */
function commandOrExit(args: string[]): MockCommand {
  let command: MockCommand;
  try {
    command = parseMockCommand(args, process.env);
  } catch (err) {
    if (!(err instanceof SettingError)) throw err;
    console.error(`npm run mock: ${err.message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (command.help) {
    console.log(USAGE);
    process.exit(0);
  }
  return command;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [first, ...rest] = process.argv.slice(2);
  if (first === 'send') process.exitCode = await send(rest);
  else await serveMock(commandOrExit(process.argv.slice(2)));
}
