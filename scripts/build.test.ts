// npm run build and npm start: `npm start` (and `npm run admin`) run the very files `npm run
// build` writes, after bringing them up to date; `npm ci` builds them (prepare). The build
// script's output starts, answers /readyz 200 and creates the demo tenant; `--if-stale` leaves
// an up-to-date build alone and rebuilds a broken one, saying why.
import { mkdir, mkdtemp, readFile, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST_DIR, ROOT, SERVED_PROGRAMS, bundleFile } from '../server/build/bundle.ts';
import { serverNodeArgs } from '../server/build/layout.ts';
import { startServer, type RunningServer } from '../server/testing/child-server.ts';
import { run, type RunResult } from './lib/run.ts';

const scripts = (JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
const rel = (file: string): string => path.relative(ROOT, file);
const commands = (script: string): string[] => (scripts[script] ?? '').split(' && ');

const buildScript = (args: string[]): Promise<RunResult> => run(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', 'build.ts'), ...args]);

describe('package.json', () => {
  it('npm start runs the server bundle npm run build writes, after bringing it up to date; npm ci builds it', () => {
    expect(scripts.build).toBe('tsx scripts/build.ts');
    expect(commands('prepare').at(-1)).toBe('npm run build');
    // exec: the shell gives way to the server, so a SIGTERM npm passes on reaches it.
    // With the server's V8 flags (SERVER_NODE_FLAGS): the arguments the cluster, the tests and the benches start it with.
    expect(commands('start')).toEqual(['tsx scripts/docs.ts --if-stale', 'tsx scripts/build.ts --if-stale', `exec node ${serverNodeArgs(rel(DIST_DIR)).join(' ')}`]);
    expect(commands('start:cluster')).toEqual(['tsx scripts/docs.ts --if-stale', 'tsx scripts/build.ts --if-stale', 'exec tsx scripts/cluster.ts']);
    expect(commands('admin')).toEqual(['tsx scripts/build.ts --if-stale', `node --enable-source-maps ${rel(bundleFile(DIST_DIR, 'server/admin/cli.ts'))}`]);
    expect(SERVED_PROGRAMS).toEqual(['server/main.ts', 'server/delivery/thread/sender-thread.ts', 'server/admin/cli.ts']);
    expect(scripts.dev).toBe('tsx scripts/dev/main.ts');
  });
});

describe('scripts/build.ts', () => {
  let scratch: string;
  let out: string;
  let server: RunningServer | null = null;
  beforeAll(async () => {
    // Inside the repository, as dist/ is: the bundles' packages resolve from its node_modules.
    await mkdir(path.join(ROOT, 'node_modules', '.cache'), { recursive: true });
    scratch = await mkdtemp(path.join(ROOT, 'node_modules', '.cache', 'build-test-'));
    out = path.join(scratch, 'dist');
  });
  afterAll(async () => {
    await server?.stop();
    await rm(scratch, { recursive: true, force: true });
  });

  it('writes a server that starts from it, answers /readyz 200 and prints the demo tenant', async () => {
    const built = await buildScript(['--out-dir', out]);
    expect(built).toMatchObject({ code: 0, stderr: '' });
    expect(built.stdout).toMatch(/^server\/main\.ts, server\/delivery\/thread\/sender-thread\.ts,? and server\/admin\/cli\.ts bundled into .+ in \d+ ms\n$/);
    server = await startServer({ program: ['--enable-source-maps', bundleFile(out, 'server/main.ts')] });
    expect(server.child.spawnargs).toContain(bundleFile(out, 'server/main.ts'));
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    expect(server.tenant?.tenantId).toMatch(/\S/);
  }, 60_000);

  it('--if-stale: an up-to-date build is left alone, silently; a missing bundle is rebuilt, said on stderr', async () => {
    const record = path.join(out, 'build.json');
    const before = (await stat(record)).mtimeMs;
    expect(await buildScript(['--out-dir', out, '--if-stale'])).toEqual({ code: 0, stdout: '', stderr: '' });
    expect((await stat(record)).mtimeMs).toBe(before);
    await unlink(bundleFile(out, 'server/admin/cli.ts'));
    const rebuilt = await buildScript(['--out-dir', out, '--if-stale']);
    expect(rebuilt).toMatchObject({ code: 0, stdout: '' });
    expect(rebuilt.stderr).toMatch(/ bundled into .+ in \d+ ms \(.*server__admin__cli\.mjs is missing\)\n$/);
    await expect(stat(bundleFile(out, 'server/admin/cli.ts'))).resolves.toBeTruthy();
  }, 60_000);

  it('an --out-dir outside the repository: exit 2, said', async () => {
    const r = await buildScript(['--out-dir', path.dirname(ROOT)]);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain('--out-dir must be inside the repository');
  });
});
