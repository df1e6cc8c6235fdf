// npm run mock: the contract's stand-in on one base URL (MOCK_HOST:MOCK_PORT, default
// 127.0.0.1:4010): every operation of the four OpenAPI documents, answered by Prism from the
// documented examples behind a front that refuses invalid requests with the contract's own
// errors, plus mocked webhooks. docs/mock.md describes it.
//
//   npm run mock                       serve; prints the URL, the paths and the mock's secrets
//   npm run mock -- --quiet            the same without Prism's request log (refusals are still logged)
//   npm run mock -- --stateful         the reference server on a temporary store (mock/stateful.ts); prints test credentials
//   npm run mock -- send order.paid --to http://localhost:3000/webhooks/payments [--secret whsec_...|env:NAME] [--example NAME] [--new-id]
//                                      send one signed event of the AsyncAPI document, then exit
//
// Only what binding the port needs is imported up front: a port in use is said at once.
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { checkSettings, portSetting } from './lib/settings.ts';
import { startMock } from './mock/start.ts';

export { startMock, type MockOptions, type RunningMock } from './mock/start.ts';

function secretArgument(value: string | undefined): string | undefined {
  if (value === undefined || !value.startsWith('env:')) return value;
  const fromEnv = process.env[value.slice(4)];
  if (!fromEnv) throw new Error(`--secret names ${value.slice(4)}, which is not set`);
  return fromEnv;
}

async function send(args: string[]): Promise<number> {
  const [{ generateSecret }, { UnknownEventError, createMockSender, mockEvents, sendMockEvent }] = await Promise.all([import('../signing/signature.ts'), import('./mock/webhooks.ts')]);
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { to: { type: 'string' }, secret: { type: 'string' }, example: { type: 'string' }, 'new-id': { type: 'boolean' } },
  });
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

/** Stops `close` on SIGINT/SIGTERM, once (a signal can arrive twice: to the group, and relayed by npm). */
function closeOnSignal(close: () => Promise<void>): void {
  let closing: Promise<void> | null = null;
  const stop = (): void => {
    closing ??= close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

async function serveStateful(quiet: boolean, host: string, port: number): Promise<void> {
  const { givenCredentials, startStatefulMock, CREDENTIAL_SETTINGS } = await import('./mock/stateful.ts');
  const given = checkSettings('npm run mock', () => givenCredentials(process.env));
  let mock;
  try {
    mock = await startStatefulMock({ port, host, given, logLevel: quiet ? 'warn' : 'info' });
  } catch (err) {
    exitIfCannotListen(err, 'npm run mock', host, port);
    throw err;
  }
  const t = mock.tenant;
  console.log(`mock (stateful: the reference server on a temporary store, removed at exit): ${mock.url}`);
  console.log('test credentials (fix them with these settings, e.g. in your .env):');
  const values: Record<keyof typeof CREDENTIAL_SETTINGS, string> = { MOCK_TENANT_ID: t.tenantId, MOCK_API_KEY: t.apiKey, MOCK_API_HASH: t.apiHash, MOCK_MEMBER_TOKEN: t.memberToken, MOCK_CALLBACK_SECRET: t.callbackSecret };
  for (const [name, value] of Object.entries(values)) console.log(`  ${name}=${value}`);
  closeOnSignal(() => mock.close());
}

async function serveMock(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { quiet: { type: 'boolean' }, stateful: { type: 'boolean' } } });
  const port = checkSettings('npm run mock', () => portSetting('MOCK_PORT', process.env.MOCK_PORT, 4010));
  const host = process.env.MOCK_HOST ?? '127.0.0.1';
  if (values.stateful) return serveStateful(values.quiet ?? false, host, port);
  let mock;
  try {
    mock = await startMock({
      port,
      host,
      ...(process.env.MOCK_WEBHOOK_SECRET ? { webhookSecret: process.env.MOCK_WEBHOOK_SECRET } : {}),
      ...(process.env.MOCK_CALLBACK_SECRET ? { callbackSecret: process.env.MOCK_CALLBACK_SECRET } : {}),
      ...(values.quiet ? {} : { log: (line: string) => console.log(line) }),
      refusals: (line: string) => console.log(line),
    });
  } catch (err) {
    exitIfCannotListen(err, 'npm run mock', host, port);
    throw err;
  }
  const { API_NAMES, loadOperations } = await import('../server/contract/operations.ts');
  console.log(`mock: ${mock.url}`);
  for (const api of API_NAMES) {
    for (const op of loadOperations(api)) console.log(`  ${api.padEnd(12)} ${op.method.toUpperCase().padEnd(6)} ${op.path}`);
  }
  console.log(`  ${'mock-only'.padEnd(12)} POST   /_mock/webhooks  {"event": "order.paid", "to": "<url>", "secret"?: "whsec_..."}`);
  console.log(`webhook secret (POST /_mock/webhooks without "secret"): ${mock.secrets.webhook}`);
  console.log(`callback secret (the payout's notifyUrl callback): ${mock.secrets.callback}`);
  closeOnSignal(() => mock.close());
}

/** A port in use (or not allowed): one line naming it and the setting, and exit 1. */
export function exitIfCannotListen(err: unknown, command: string, host: string, port: number): void {
  const code = (err as { code?: unknown } | null)?.code;
  if (code !== 'EADDRINUSE' && code !== 'EACCES') return;
  const why = code === 'EADDRINUSE' ? 'is in use' : 'is not allowed';
  console.error(`${command}: cannot listen on ${host}:${port}: the port ${why}; stop what listens there or set MOCK_PORT to another port`);
  process.exit(1);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [first, ...rest] = process.argv.slice(2);
  if (first === 'send') process.exitCode = await send(rest);
  else await serveMock(process.argv.slice(2));
}
