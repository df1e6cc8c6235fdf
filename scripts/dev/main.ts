// npm run dev [-- --base <git ref>]: the API designer's loop. Serves the server (embedded
// SQLite store in DATA_DIR, default data/dev/, kept across restarts) with its /docs on PORT
// (default 8080) and the mock on MOCK_PORT (default 4010), and on every save in spec/ checks,
// regenerates and serves the change (pipeline.ts). Ctrl-C stops everything it started.
import type { Server } from 'node:http';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../server/config.ts';
import { buildDocs, docsStale } from '../docs.ts';
import { checkSettings, portSetting } from '../lib/settings.ts';
import { ROOT, SPEC_DIR } from '../lib/specs.ts';
import { createLastGood } from './last-good.ts';
import { mockLayout, startMockProcess } from './mock.ts';
import { launchServer, onSave, serialize, type LoopState } from './pipeline.ts';
import { startProxy } from './proxy.ts';
import { createReloadHub } from './reload.ts';
import { dim, emit, failed, info, ok, red, timed } from './reporter.ts';
import { loadRelease } from './steps/spec-diff.ts';
import { describeTypecheck, startTypecheck } from './steps/typecheck.ts';
import { allStopped } from './processes.ts';
import { watchSpec } from './watcher.ts';

const { values } = parseArgs({ options: { base: { type: 'string' } }, allowPositionals: false });
// 0: any free port (the test and the benchmark read the ports from the ready event).
const listenPort = (name: string, fallback: number): number => (process.env[name] === '0' ? 0 : portSetting(name, process.env[name], fallback));
const settings = checkSettings('npm run dev', () => ({
  port: listenPort('PORT', 8080),
  mockPort: listenPort('MOCK_PORT', 4010),
  host: process.env.HOST ?? '127.0.0.1',
  dataDir: path.resolve(process.env.DATA_DIR ?? path.join(ROOT, 'data', 'dev')),
  docsDir: loadConfig().docsDir,
}));

// Prism, redocly, tsx and the server load thousands of modules on every start: V8's compile
// cache on disk makes each start after the first cheaper.
process.env.NODE_COMPILE_CACHE ??= path.join(ROOT, 'node_modules', '.cache', 'node-compile-cache');

// A signal during start-up exits at once: the exit kills every process group started so far
// (processes.ts), which a death by the signal's default action would not.
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const exitNow = (): never => process.exit(130);
for (const signal of SIGNALS) process.on(signal, exitNow);

const reload = createReloadHub();
// The ports first: they answer 503 "starting" until the server and the mock are up.
let state: LoopState | undefined;
const proxies: Server[] = await Promise.all([
  startProxy({ name: 'server', upstream: () => (state ? { pid: state.server.pid, portFor: () => state?.server.port ?? 0 } : null), reload }, settings.port, settings.host),
  startProxy({ name: 'mock', upstream: () => state?.mock ?? null }, settings.mockPort, settings.host),
]);
const [serverPort, mockPort] = proxies.map((p) => (p.address() as { port: number }).port);
const serverUrl = `http://${settings.host}:${serverPort}`;
const mockUrl = `http://${settings.host}:${mockPort}`;

// Prism's per-request lines (every request the designer's client makes) and its start-up
// chatter; its own failures (a document it cannot load) stay. The server's lines name its own
// port (the demo tenant's "Try it"): the designer's is the loop's.
const quiet = /\b(info|success|start|awaiting)\b|^mock \w+: http|\[(HTTP SERVER|VALIDATOR|NEGOTIATOR)\]/i;
const output = (who: string) => (line: string) => {
  if (line.trim() === '' || (who === 'mock' && quiet.test(line))) return;
  const shown = who === 'server' ? line.replace(/localhost:\d+/g, `localhost:${serverPort}`) : line;
  process.stdout.write(`${dim(`[${who}]`)} ${shown}\n`);
};

info(`npm run dev: ${path.relative(process.cwd(), SPEC_DIR) || 'spec'}/ → generated/, the server, the mock and the docs`);
if (await docsStale(settings.docsDir)) await timed('docs (every page, once)', () => buildDocs(settings.docsDir));

const serverEnv: NodeJS.ProcessEnv = { DATA_DIR: settings.dataDir, DOCS_DIR: settings.docsDir, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' };
const layout = await mockLayout();
const lastGood = await createLastGood(path.join(settings.dataDir, 'last-good-spec'));
const [server, mock] = await timed('server and mock started', () => Promise.all([launchServer({ serverEnv, output }), startMockProcess(layout, lastGood, output('mock'))]));
const release = loadRelease(values.base).catch((err: Error) => {
  failed('spec:diff: the base did not load', [err.message]);
  return undefined;
});
const loop: LoopState = { server, mock, layout, reload, docsDir: settings.docsDir, lastGood, serverEnv, output, release };
state = loop;
info(`server ${serverUrl} (data in ${path.relative(process.cwd(), settings.dataDir)}), docs ${serverUrl}/docs, mock ${mockUrl} (${layout.served.join(', ')})`);

void loop.release.then((r) => info(r === undefined ? 'spec:diff: no earlier version of spec/ to compare with' : `spec:diff compares with ${r.ref} (${r.why})`));
const typecheck = startTypecheck((r) => {
  const m = describeTypecheck(r);
  if (m.kind === 'info') info(m.text);
  else if (m.kind === 'failed') failed(m.text, m.errors);
  else ok('type-check', 0, m.text);
  emit({ type: 'typecheck', errors: r.total });
});

const stopWatching = watchSpec(SPEC_DIR, serialize((files) => onSave(loop, files)));
info(`watching spec/ ${dim('(Ctrl-C stops everything)')}`);
emit({ type: 'ready', serverUrl, mockUrl });

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  info(`${signal}: stopping the server, the mock and the type-checker`);
  stopWatching();
  reload.close();
  for (const p of proxies) p.closeAllConnections();
  await Promise.all([...proxies.map((p) => new Promise((r) => p.close(r))), loop.server.stop(), loop.mock.stop(), typecheck.stop()]);
  await allStopped();
  emit({ type: 'stopped' });
  process.exit(0);
}
for (const signal of SIGNALS) process.off(signal, exitNow).on(signal, () => void shutdown(signal));
process.on('disconnect', () => void shutdown('the parent left'));
process.on('uncaughtException', (err) => {
  process.stderr.write(`${red('npm run dev failed:')} ${err.stack ?? err.message}\n`);
  process.exit(1);
});
