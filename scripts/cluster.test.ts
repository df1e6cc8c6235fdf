// npm run start:cluster as a user runs it: both instances answer and share state, the demo
// tenant is printed once, and Ctrl-C (SIGINT) leaves no instance and no PostgreSQL running.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createOrdersClient } from '../client/api.ts';
import type { DemoTenant } from '../server/testing/child-server.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

let dataDir: string | null = null;
let cluster: ChildProcess | null = null;

afterAll(async () => {
  // Its own process group: nothing it started outlives a failed test.
  if (cluster?.pid && cluster.exitCode === null) process.kill(-cluster.pid, 'SIGKILL');
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** A port p with p + 1 free as well (the cluster listens on PORT and PORT + 1). */
async function freePortPair(): Promise<number> {
  for (;;) {
    const p = 20_000 + Math.floor(Math.random() * 30_000);
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

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('npm run start:cluster', () => {
  it('runs two instances on one embedded PostgreSQL and stops everything on Ctrl-C', { timeout: 180_000 }, async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'cluster-test-'));
    // As root, PostgreSQL runs as the `postgres` user, which must be able to enter the folder.
    await chmod(dataDir, 0o755);
    const port = await freePortPair();
    cluster = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', 'cluster.ts')], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', NODE_ENV: 'test', VALIDATE_RESPONSES: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    cluster.stdout?.on('data', (c: Buffer) => (out += c.toString()));
    cluster.stderr?.on('data', (c: Buffer) => (out += c.toString()));
    const exit = new Promise<number | null>((resolve) => cluster?.once('exit', (code) => resolve(code)));

    await until(() => out.includes('Cluster ready') || cluster?.exitCode !== null, 90_000, `the cluster to be ready\n${out}`);
    expect(out).toContain('Cluster ready');
    const urls = [`http://127.0.0.1:${port}`, `http://127.0.0.1:${port + 1}`];
    for (const url of urls) expect((await fetch(`${url}/healthz`)).status).toBe(200);

    // The demo tenant, printed once, works on either instance, and they share one database.
    const m = /Demo tenant created[^\n]*\n(\{[\s\S]*?\n\})/.exec(out);
    expect(m?.[1]).toBeDefined();
    const tenant = JSON.parse(m?.[1] ?? '{}') as DemoTenant;
    const [a, b] = urls.map((baseUrl) => createOrdersClient({ baseUrl, apiKey: tenant.apiKey, apiHash: tenant.apiHash }));
    const created = await a!.POST('/v2/orders', { body: { merchantReference: 'cluster-1', amountMinor: 1250 } });
    expect(created.response.status).toBe(201);
    const orderId = created.data!.orderId;
    const read = await b!.GET('/v2/orders/{orderId}', { params: { path: { orderId } } });
    expect(read.data?.orderId).toBe(orderId);

    const pgDir = path.join(dataDir, 'cluster', 'postgres');
    expect(processesWith(pgDir).length).toBeGreaterThan(0);

    // Ctrl-C in a terminal: SIGINT to the whole foreground process group.
    process.kill(-cluster.pid!, 'SIGINT');
    expect(await exit).toBe(0);
    for (const url of urls) expect(await fetch(`${url}/healthz`).then(() => 'answers', () => 'closed')).toBe('closed');
    // The guard stops PostgreSQL before the cluster exits; allow its postmaster a moment to go.
    await until(() => processesWith(pgDir).length === 0, 10_000, `no process on ${pgDir}: ${processesWith(pgDir).join('; ')}`);
    expect(out).not.toContain('failed');
  });
});
