// npm run check:packages: the two packages proven the way a partner or a merchant gets them.
// Packs payments-conformance and payments-webhooks with plain `npm pack` in each folder (its
// prepack script builds), installs each tarball into its own empty folder outside the
// repository (dependencies from the npm registry, never the repository's node_modules), starts the bundled reference server, and there runs
//   npx payments-conformance api | sender --skip-slow   against the reference server,
//   npx payments-conformance receiver                    against a receiver of a few lines of
//                                                        JavaScript on the installed helpers,
// loads the helpers from CommonJS too, runs the shipped signature vectors through the installed
// Web Crypto verifier (payments-webhooks/web) under Node and under Bun, proves that entry bundles
// with no Node built-in (esbuild, platform neutral), type-checks a merchant's strict TypeScript
// against the installed declarations (ESM and CommonJS resolution), and runs the installed
// `payments-webhooks` command: --help, then listen and trigger (check-packages/listen.ts).
// Exits 1 unless every step exits 0. Prints the
// installed size of each package (with its dependencies) and the suite's run time per target.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { checkListen } from './check-packages/listen.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGES = [
  { workspace: 'conformance', name: 'payments-conformance', goalBytes: 15 * 1024 * 1024 },
  // 1.25 MiB since it verifies two signature schemes and ships both schemes' vectors (86 KB) and
  // trigger's schema validator; its types ship twice (ESM and CJS, about 280 KB of the 1.07 MiB).
  { workspace: 'client', name: 'payments-webhooks', goalBytes: 1.25 * 1024 * 1024 },
] as const;
const RUN_GOAL_MS = 60_000;

// The children see neither the repository's npm settings (npm run sets npm_* variables) nor
// its module paths.
const cleanEnv: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== 'NODE_PATH' && k !== 'INIT_CWD'),
);

interface Exit {
  code: number | null;
  /** stdout alone. */
  stdout: string;
  /** stdout and stderr as they came. */
  output: string;
}

function run(cmd: string, args: string[], cwd: string, quiet = false): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: cleanEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let stdout = '';
    const keep = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      if (!quiet) process.stdout.write(chunk);
    };
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      keep(chunk);
    });
    child.stderr.on('data', keep);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, output }));
  });
}

async function must(cmd: string, args: string[], cwd: string, quiet = true): Promise<string> {
  const r = await run(cmd, args, cwd, quiet);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) exited ${r.code}\n${r.output}`);
  return r.stdout;
}

/** Bytes of every file under `dir` (what the install put on disk). */
async function sizeOf(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(path.join(entry.parentPath, entry.name))).size;
  }
  return total;
}

/** The first line a child prints on stdout. */
function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => resolve(line));
    child.once('exit', (code) => reject(new Error(`exited ${code} before it was ready`)));
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (child.stdin) child.stdin.end();
  else child.kill('SIGTERM');
  return exited;
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(2)} MB`;
const secret = (): string => `whsec_${randomBytes(32).toString('base64url')}`;

// A merchant's receiver on the installed helpers: verify, de-duplicate by event id, answer.
const RECEIVER = `import { createServer } from 'node:http';
import { isWebhookVerificationError, verifyWebhook } from 'payments-webhooks';

const seen = new Set();
const server = createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  // [current, previous]: during a rotation a request signed with the previous secret still verifies.
  const secrets = JSON.parse(req.url === '/callbacks' ? process.env.CALLBACK_SECRETS : process.env.WEBHOOK_SECRETS);
  try {
    const { eventId } = verifyWebhook({ rawBody: Buffer.concat(chunks), headers: req.headers, secrets });
    const duplicate = seen.has(eventId);
    seen.add(eventId);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ received: true, duplicate }));
  } catch (err) {
    res.writeHead(isWebhookVerificationError(err) ? 400 : 500).end();
  }
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

// The helpers from CommonJS: sign test headers and verify them, build a typed client.
const FROM_COMMONJS = `const { generateTestHeaders, verifyWebhook } = require('payments-webhooks');
const { createOrdersClient } = require('payments-webhooks/api');
const { verifyWebhookAsync } = require('payments-webhooks/web');
if (typeof verifyWebhookAsync !== 'function') throw new Error('no verifyWebhookAsync in payments-webhooks/web');
const secret = 'whsec_' + 'x'.repeat(43);
const payload = JSON.stringify({ id: 'a'.repeat(64), type: 'webhook.test' });
const { eventId } = verifyWebhook({ rawBody: payload, headers: generateTestHeaders({ payload, secret }), secrets: secret });
if (eventId !== 'a'.repeat(64)) throw new Error('verifyWebhook returned ' + eventId);
if (typeof createOrdersClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', apiHash: 'h' }).GET !== 'function') throw new Error('no client');
console.log('payments-webhooks loads from CommonJS');
`;

// The shipped signature vectors through the installed Web Crypto verifier, as a merchant on an
// edge runtime would import it; the same file runs under Node and under Bun.
const WEB_VECTORS = `import { verifyWebhookAsync } from 'payments-webhooks/web';
import file from 'payments-webhooks/signature-vectors.json' with { type: 'json' };

const failures = [];
for (const v of file.vectors) {
  const headers = {};
  for (const [name, value] of v.headers) headers[name] = name in headers ? [].concat(headers[name], value) : value;
  const rawBody = Uint8Array.from(atob(v.bodyBase64), (c) => c.charCodeAt(0));
  try {
    const r = await verifyWebhookAsync({ rawBody, headers, secrets: v.secrets, toleranceSeconds: v.toleranceSeconds, now: () => v.now * 1000 });
    const got = JSON.stringify({ eventId: r.eventId, timestamp: r.timestamp, secretIndex: r.secretIndex });
    if (!v.valid || got !== JSON.stringify(v.expected)) failures.push(v.name + ': accepted ' + got);
  } catch (err) {
    if (v.valid || err.code !== v.error) failures.push(v.name + ': refused with ' + (err.code ?? err.message));
  }
}
const runtime = typeof Bun === 'undefined' ? 'node ' + process.version : 'bun ' + Bun.version;
console.log(runtime + ': payments-webhooks/web passed ' + (file.vectors.length - failures.length) + ' of ' + file.vectors.length + ' signature vectors');
for (const f of failures) console.log('  ' + f);
process.exitCode = failures.length === 0 ? 0 : 1;
`;

/** The installed web entry bundles for a runtime without Node's built-ins: esbuild would fail on any. */
async function webEntryHasNoNodeImports(dir: string): Promise<void> {
  const out = await build({
    stdin: { contents: "export * from 'payments-webhooks/web';", resolveDir: dir, loader: 'js' },
    bundle: true,
    write: false,
    platform: 'neutral',
    format: 'esm',
    logLevel: 'silent',
  });
  const code = out.outputFiles[0]?.text ?? '';
  if (/\bimport\s*[("'{*]|\brequire\s*\(|["']node:/.test(code)) throw new Error('payments-webhooks/web still loads a module after bundling');
  console.log(`payments-webhooks/web bundles for a runtime without Node built-ins (${(code.length / 1024).toFixed(1)} KiB, no import left)`);
}

// A merchant's TypeScript on the installed declarations, as ESM (consumer.ts) and CommonJS
// (consumer.cts), strict. The @ts-expect-error lines prove the types say something: each must
// be an error, so declarations that degrade to `any` fail the check too.
const CONSUMER = `import { generateTestHeaders, isWebhookVerificationError, verifyWebhook, type VerifiedWebhook, type WebhookEvent, type WebhookVerificationErrorCode } from 'payments-webhooks';
import { createTransactionsClient } from 'payments-webhooks/api';
import { verifyWebhookAsync } from 'payments-webhooks/web';

const secret = 'whsec_' + 'x'.repeat(43);
const payload = JSON.stringify({ id: 'a'.repeat(64), type: 'webhook.test' });
const verified: VerifiedWebhook<WebhookEvent> = verifyWebhook({ rawBody: Buffer.from(payload), headers: generateTestHeaders({ payload, secret }), secrets: [secret] });
const event = verified.event;
// The event types and payout statuses come from the contract; they are not restated here, only
// proven to be closed sets (a string outside them is an error, which \`any\` or \`string\` would take).
if ('type' in event) {
  // @ts-expect-error: not an event type of the contract
  const kind: typeof event.type = 'no.such.event';
  if (event.type === 'order.paid') {
    const created: string = event.createdAt;
    void created;
  }
  void kind;
} else {
  // @ts-expect-error: not a payout status of the contract
  const status: typeof event.status = 'no-such-status';
  void status;
}
try {
  verifyWebhook({ rawBody: payload, headers: {}, secrets: secret });
} catch (err) {
  if (isWebhookVerificationError(err)) {
    const code: WebhookVerificationErrorCode = err.code;
    void code;
  }
}
// @ts-expect-error: rawBody is the body as received, never a parsed object
verifyWebhook({ rawBody: { id: 'x' }, headers: {}, secrets: secret });
const onTheEdge: Promise<VerifiedWebhook<WebhookEvent>> = verifyWebhookAsync({ rawBody: new Uint8Array(), headers: new Headers(), secrets: secret, subtle: crypto.subtle });
void onTheEdge.catch(() => undefined);

async function listed(): Promise<void> {
  const transactions = createTransactionsClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', apiHash: 'h' });
  const { data, error } = await transactions.GET('/transactions/users', { params: { query: { userId: 'user_1', limit: 20 } } });
  if (data) {
    const first: string | undefined = data[0]?.id;
    void first;
  } else {
    const type: string = error.type;
    void type;
  }
  // @ts-expect-error: not a path of the Transactions API
  await transactions.GET('/no-such-path');
  // @ts-expect-error: userId is required
  await transactions.GET('/transactions/users', { params: { query: {} } });
  // @ts-expect-error: GET /transactions requires x-tenant-id, which a client without tenantId does not send
  await transactions.GET('/transactions', { params: { query: { orderNumber: 'ORD-000042' } } });
  // A client created with tenantId sends x-tenant-id itself: the header is not asked for again.
  const scoped = createTransactionsClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', apiHash: 'h', tenantId: 'ten_1' });
  const found = await scoped.GET('/transactions', { params: { query: { orderNumber: 'ORD-000042' } } });
  const foundId: string | undefined = found.data?.id;
  void foundId;
}
void listed;
`;

/**
 * Type-checks the merchant's TypeScript in `dir` with the repository's compiler (strict, Node's
 * module rules): consumer.ts resolves the packages' `import` declarations, consumer.cts (the
 * same text) their `require` ones.
 */
async function typeCheck(dir: string): Promise<void> {
  await writeFile(path.join(dir, 'consumer.ts'), CONSUMER);
  await writeFile(path.join(dir, 'consumer.cts'), CONSUMER);
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  // @types/node from the repository: a merchant's project has its own.
  const options = ['--noEmit', '--strict', '--exactOptionalPropertyTypes', '--module', 'nodenext', '--target', 'es2022', '--skipLibCheck', 'false', '--typeRoots', path.join(ROOT, 'node_modules', '@types'), '--types', 'node'];
  await must(process.execPath, [tsc, ...options, 'consumer.ts', 'consumer.cts'], dir, false);
  console.log('payments-webhooks type-checks in a strict TypeScript project, as ESM and CommonJS');
}

interface Packed {
  name: string;
  filename: string;
  size: number;
}

/** `npm pack` in the package's folder; its stdout carries the build's output, so the tarball is found on disk. */
async function pack(workspace: string, name: string, into: string): Promise<Packed> {
  await must('npm', ['pack', '--pack-destination', into], path.join(ROOT, workspace));
  const filename = (await readdir(into)).find((f) => f.startsWith(`${name}-`) && f.endsWith('.tgz'));
  if (!filename) throw new Error(`npm pack in ${workspace}/ made no tarball of ${name}`);
  return { name, filename, size: (await stat(path.join(into, filename))).size };
}

async function main(): Promise<number> {
  const work = await mkdtemp(path.join(os.tmpdir(), 'payments-packages-'));
  const children: ChildProcess[] = [];
  try {
    // Packed as a maintainer would: plain `npm pack` in the package's folder, whose prepack builds.
    console.log('check:packages: npm pack in each package folder');
    const packed: Packed[] = [];
    for (const pkg of PACKAGES) packed.push(await pack(pkg.workspace, pkg.name, work));

    const dirs = new Map<string, string>();
    const sizes: string[] = [];
    let ok = true;
    for (const pkg of PACKAGES) {
      const tarball = packed.find((p) => p.name === pkg.name);
      if (!tarball) throw new Error(`npm pack made no tarball of ${pkg.name}`);
      const dir = path.join(work, pkg.name);
      await mkdir(dir);
      await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: `try-${pkg.name}`, private: true, type: 'module' }));
      await must('npm', ['install', '--no-audit', '--no-fund', path.join(work, tarball.filename)], dir);
      const installed = await sizeOf(path.join(dir, 'node_modules'));
      const within = installed < pkg.goalBytes;
      ok &&= within;
      sizes.push(`${pkg.name}: tarball ${mb(tarball.size)}, installed with dependencies ${mb(installed)} (goal < ${mb(pkg.goalBytes)}${within ? '' : ', NOT MET'})`);
      dirs.set(pkg.name, dir);
    }
    const suiteDir = dirs.get('payments-conformance')!;
    const helpersDir = dirs.get('payments-webhooks')!;

    await writeFile(path.join(helpersDir, 'from-commonjs.cjs'), FROM_COMMONJS);
    await must('node', ['from-commonjs.cjs'], helpersDir, false);
    await typeCheck(helpersDir);
    await writeFile(path.join(helpersDir, 'web-vectors.mjs'), WEB_VECTORS);
    await must('node', ['web-vectors.mjs'], helpersDir, false);
    await must(path.join(ROOT, 'node_modules', '.bin', 'bun'), ['web-vectors.mjs'], helpersDir, false);
    await webEntryHasNoNodeImports(helpersDir);

    console.log('check:packages: the reference server and the receiver on payments-webhooks');
    const reference = spawn(process.execPath, ['--import', 'tsx', 'scripts/check-packages/reference.ts'], { cwd: ROOT, env: cleanEnv, stdio: ['pipe', 'pipe', 'inherit'] });
    children.push(reference);
    const server = JSON.parse(await firstLine(reference)) as { url: string; api: string[]; sender: string[]; merchant: { apiKey: string; apiSecret: string } };
    console.log('check:packages: payments-webhooks listen and trigger');
    ok &&= await checkListen(helpersDir, cleanEnv, server);
    await writeFile(path.join(helpersDir, 'receiver.js'), RECEIVER);
    const [webhook, previousWebhook, callback, previousCallback] = [secret(), secret(), secret(), secret()];
    const receiverEnv = { ...cleanEnv, WEBHOOK_SECRETS: JSON.stringify([webhook, previousWebhook]), CALLBACK_SECRETS: JSON.stringify([callback, previousCallback]) };
    const receiver = spawn('node', ['receiver.js'], { cwd: helpersDir, env: receiverEnv, stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(receiver);
    const receiverUrl = `http://127.0.0.1:${await firstLine(receiver)}`;

    const targets: Array<[string, string[]]> = [
      ['api', server.api],
      ['sender', [...server.sender, '--skip-slow']],
      ['receiver', [
        'receiver',
        ...['--url', `${receiverUrl}/webhooks`, '--secret', webhook, '--previous-secret', previousWebhook],
        ...['--callback-url', `${receiverUrl}/callbacks`, '--callback-secret', callback, '--previous-callback-secret', previousCallback],
        '--quiet',
      ]],
    ];
    const times: string[] = [];
    let total = 0;
    for (const [name, args] of targets) {
      console.log(`check:packages: npx payments-conformance ${name}`);
      const started = performance.now();
      const r = await run('npx', ['--no-install', 'payments-conformance', ...args, '--report', `json=${path.join(work, `${name}.json`)}`], suiteDir);
      const ms = performance.now() - started;
      total += ms;
      times.push(`${name}: ${(ms / 1000).toFixed(1)} s, exit ${r.code}`);
      ok &&= r.code === 0;
    }

    console.log('\ncheck:packages: installed size');
    for (const line of sizes) console.log(`  ${line}`);
    console.log('check:packages: suite run time against the bundled server');
    for (const line of times) console.log(`  ${line}`);
    // Reported, not enforced: the time depends on the machine; the exit codes and sizes do not.
    console.log(`  all three: ${(total / 1000).toFixed(1)} s (goal < ${RUN_GOAL_MS / 1000} s${total < RUN_GOAL_MS ? '' : ', not met'})`);
    console.log(ok ? 'check:packages: ok' : 'check:packages: FAILED');
    return ok ? 0 : 1;
  } finally {
    // The reference server closes (and removes its temporary store) when its stdin ends.
    await Promise.all(children.map((child) => stop(child)));
    await rm(work, { recursive: true, force: true });
  }
}

process.exitCode = await main();
