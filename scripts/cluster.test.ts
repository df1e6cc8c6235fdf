// npm run start:cluster as a user runs it: both instances answer and share state, the demo
// tenant is printed once, and Ctrl-C (SIGINT) leaves no instance and no PostgreSQL running;
// a restart finds its data again, a cluster killed outright (SIGKILL) leaves nothing either, and
// a port held by another process fails the start instead of being taken for an instance.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createOrdersClient } from '../client/api.ts';
import { DIST_DIR, bundleFile } from '../server/build/bundle.ts';
import type { DemoTenant } from '../server/testing/child-server.ts';
import { BUNDLE_DIR_VARIABLE } from '../server/testing/server-bundle.ts';
import { until } from '../testing/until.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** What an instance runs: the server bundle, the run's own here (dist/ under npm run start:cluster). */
const INSTANCE = bundleFile(process.env[BUNDLE_DIR_VARIABLE] ?? DIST_DIR, 'server/main.ts');

let dataDir: string | null = null;
let cluster: ChildProcess | null = null;

afterAll(async () => {
  // Its own process group: nothing it started outlives a failed test.
  if (cluster?.pid && cluster.exitCode === null) {
    try {
      process.kill(-cluster.pid, 'SIGKILL');
    } catch {
      // the group is empty: everything already exited
    }
  }
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/**
 * A port p with p + 1 free as well (the cluster listens on PORT and PORT + 1). Below Linux's
 * ephemeral range (32768 and up), which the kernel hands to every port-0 listener and outgoing
 * connection of the other test files running meanwhile: a pair found free there can be taken
 * before the cluster binds it.
 */
async function freePortPair(): Promise<number> {
  for (;;) {
    const p = 10_000 + Math.floor(Math.random() * 22_000);
    if ((await portFree(p)) && (await portFree(p + 1))) return p;
  }
}

/** Live processes whose command line mentions `needle`, read from /proc (no `ps` needed). */
function processesWith(needle: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      if (args.includes(needle)) found.push(`${pid} ${args}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Pids of the live children of `parent` whose command line mentions `needle` (/proc/PID/stat: the fourth field is the parent). */
function childrenOf(parent: number, needle: string): number[] {
  return processesWith(needle)
    .map((line) => Number(line.split(' ')[0]))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent;
      } catch {
        return false;
      }
    });
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

type Cluster = { child: ChildProcess; output(): string; exit: Promise<number | null> };

/** Spawns `npm run start:cluster`'s script in its own process group on DATA_DIR and PORT, PORT + 1. */
function spawnCluster(dir: string, port: number): Cluster {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', 'cluster.ts')], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', NODE_ENV: 'test', VALIDATE_RESPONSES: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  cluster = child;
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => out, exit };
}

/** spawnCluster, resolved once it says it is ready. */
async function startCluster(dir: string, port: number): Promise<Cluster> {
  const started = spawnCluster(dir, port);
  await until(() => started.output().includes('Cluster ready') || started.child.exitCode !== null, () => `the cluster to be ready\n${started.output()}`, 90_000);
  expect(started.output()).toContain('Cluster ready');
  return started;
}

describe('npm run start:cluster', () => {
  let port = 0;
  let tenant: DemoTenant | null = null;
  let firstOrder = '';

  it('runs two instances on one embedded PostgreSQL and stops everything on Ctrl-C', { timeout: 180_000 }, async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'cluster-test-'));
    // As root, PostgreSQL runs as the `postgres` user, which must be able to enter the folder.
    await chmod(dataDir, 0o755);
    port = await freePortPair();
    const started = await startCluster(dataDir, port);
    const exit = started.exit;
    const out = started.output();
    const urls = [`http://127.0.0.1:${port}`, `http://127.0.0.1:${port + 1}`];
    // "Cluster ready" means ready: /readyz, not only /healthz (which answers while the store opens).
    for (const url of urls) expect((await fetch(`${url}/readyz`)).status).toBe(200);

    // The demo tenant, printed once, works on either instance, and they share one database.
    const m = /Demo tenant created[^\n]*\n(\{[\s\S]*?\n\})/.exec(out);
    expect(m?.[1]).toBeDefined();
    const demo = (tenant = JSON.parse(m?.[1] ?? '{}') as DemoTenant);
    const [a, b] = urls.map((baseUrl) => createOrdersClient({ baseUrl, apiKey: demo.apiKey, apiHash: demo.apiHash }));
    const created = await a!.POST('/v2/orders', { body: { merchantReference: 'cluster-1', amountMinor: 1250 } });
    expect(created.response.status).toBe(201);
    const orderId = (firstOrder = created.data!.orderId);
    const read = await b!.GET('/v2/orders/{orderId}', { params: { path: { orderId } } });
    expect(read.data?.orderId).toBe(orderId);

    const pgDir = path.join(dataDir, 'cluster', 'postgres');
    expect(processesWith(pgDir).length).toBeGreaterThan(0);

    // Ctrl-C in a terminal: SIGINT to the whole foreground process group.
    process.kill(-started.child.pid!, 'SIGINT');
    expect(await exit).toBe(0);
    for (const url of urls) expect(await fetch(`${url}/healthz`).then(() => 'answers', () => 'closed')).toBe('closed');
    // The guard stops PostgreSQL before the cluster exits; allow its postmaster a moment to go.
    await until(() => processesWith(pgDir).length === 0, () => `no process on ${pgDir}: ${processesWith(pgDir).join('; ')}`, 10_000);
    expect(started.output()).not.toContain('failed');
  });

  it('restarts on its data, and killed outright (SIGKILL) leaves no instance and no PostgreSQL running', { timeout: 180_000 }, async () => {
    if (!dataDir || !tenant) throw new Error('needs the cluster of the test before');
    // Other ports than the first run's: another test file may have taken those meanwhile.
    port = await freePortPair();
    const started = await startCluster(dataDir, port);
    // The same database: no new demo tenant, and the first run's order is there.
    expect(started.output()).not.toContain('Demo tenant created');
    const urls = [`http://127.0.0.1:${port}`, `http://127.0.0.1:${port + 1}`];
    for (const url of urls) expect((await fetch(`${url}/readyz`)).status).toBe(200);
    const client = createOrdersClient({ baseUrl: urls[1]!, apiKey: tenant.apiKey, apiHash: tenant.apiHash });
    const read = await client.GET('/v2/orders/{orderId}', { params: { path: { orderId: firstOrder } } });
    expect(read.error ?? null).toBeNull();
    expect(read.data?.orderId).toBe(firstOrder);

    // SIGKILL to the cluster process alone: no handler of its runs, its children are orphaned.
    const instances = childrenOf(started.child.pid!, INSTANCE);
    expect(instances.length).toBe(2);
    process.kill(started.child.pid!, 'SIGKILL');
    await started.exit;
    const pgDir = path.join(dataDir, 'cluster', 'postgres');
    await until(async () => (await Promise.all(urls.map((url) => fetch(`${url}/healthz`).then(() => true, () => false)))).every((up) => !up), 'both instances to stop', 60_000);
    await until(() => !instances.some(alive), 'the instance processes to exit', 60_000);
    await until(() => processesWith(pgDir).length === 0, () => `no process on ${pgDir}: ${processesWith(pgDir).join('; ')}`, 30_000);
  });

  it('is not ready while another process holds one of its ports, even one that answers HTTP: it exits 1 and leaves no PostgreSQL', { timeout: 180_000 }, async () => {
    if (!dataDir) throw new Error('needs the cluster of the tests before');
    port = await freePortPair();
    // A stranger on PORT + 1 that answers 200 to everything, /healthz and /readyz included.
    const stranger = createHttpServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}'));
    await new Promise<void>((resolve) => stranger.listen(port + 1, '127.0.0.1', resolve));
    try {
      const started = spawnCluster(dataDir, port);
      expect(await started.exit).toBe(1);
      expect(started.output()).not.toContain('Cluster ready');
      expect(started.output()).toMatch(/EADDRINUSE/);
      expect(started.output()).toContain(`the instance on port ${port + 1} exited`);
      const pgDir = path.join(dataDir, 'cluster', 'postgres');
      await until(() => processesWith(pgDir).length === 0, () => `no process on ${pgDir}: ${processesWith(pgDir).join('; ')}`, 30_000);
      await until(() => childrenOf(started.child.pid!, INSTANCE).length === 0, 'the other instance to exit', 30_000);
    } finally {
      await new Promise((resolve) => stranger.close(resolve));
    }
  });
});
