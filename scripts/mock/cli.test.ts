// The command line of `npm run mock`, run as a developer runs it: --help and a wrong option,
// --port, a state folder kept across a restart, and a temporary store removed on SIGHUP (a
// closed terminal). The README, docs/mock.md and --help name the same options.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../server/testing/child-server.ts';
import { ROOT } from '../lib/specs.ts';
import { OPTION_NAMES, USAGE } from './cli.ts';
import { PASSED_SETTINGS } from './stateful.ts';
import type { MockTenant, TenantsFile } from './tenants.ts';
import { spawnMock } from './testing/spawn.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

function runMock(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('npm', ['run', '-s', 'mock', '--', ...args], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('npm run mock -- --help and wrong options', () => {
  it('prints the usage with every option and exits 0', () => {
    const r = runMock(['--help']);
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe(USAGE);
  });

  it('answers an unknown option with one line and the usage, exit 2', () => {
    const r = runMock(['--bogus']);
    expect(r.status).toBe(2);
    const [first, blank, ...rest] = r.stderr.trim().split('\n');
    expect(first).toBe("npm run mock: Unknown option '--bogus'");
    expect(blank).toBe('');
    expect(rest.join('\n')).toBe(USAGE);
  });

  it('refuses a stateful option without --stateful, and a tenant count that is not a positive integer', () => {
    expect(runMock(['--state', '/tmp/x']).stderr.split('\n')[0]).toBe('npm run mock: --state needs --stateful');
    const r = runMock(['--stateful', '--tenants', 'two']);
    expect(r.status).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe('npm run mock: --tenants must be a positive integer, not two');
  });

  it('has docs/mock.md name every option and every passed setting, and the README name both modes', () => {
    const mockMd = readFileSync(path.join(ROOT, 'docs', 'mock.md'), 'utf8');
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    for (const name of OPTION_NAMES) expect(mockMd, name).toContain(`--${name}`);
    for (const name of PASSED_SETTINGS) {
      expect(mockMd, name).toContain(name);
      expect(USAGE, name).toContain(name);
    }
    for (const words of ['npm run mock -- --stateful', '--tenants', '--state']) expect(readme).toContain(words);
  });
});

describe('npm run mock -- --port', () => {
  it('serves on the port given', async () => {
    const port = await freePort();
    const mock = await spawnMock(['--port', String(port), '--quiet']);
    try {
      expect(mock.url).toBe(`http://127.0.0.1:${port}`);
      expect((await fetch(`${mock.url}/healthz`)).status).toBe(200);
    } finally {
      await mock.stop();
    }
  }, 60_000);
});

describe('npm run mock -- --stateful --state DIR', () => {
  it('reads back, after a restart, the order and the endpoint made before it, with the same credentials', async () => {
    const state = await mkdtemp(path.join(os.tmpdir(), 'mock-state-'));
    dirs.push(state);
    const first = await spawnMock(['--stateful', '--state', state, '--quiet']);
    const t = (JSON.parse(await readFile(path.join(state, 'tenants.json'), 'utf8')) as TenantsFile).tenants[0] as MockTenant;
    const keys = { 'x-api-key': t.apiKey, 'x-api-hash': t.apiHash, 'content-type': 'application/json' };
    const member = { authorization: `Bearer ${t.memberToken}`, 'content-type': 'application/json' };
    let order: { orderId: string };
    let endpoint: { id: string; secret: string };
    try {
      const created = await fetch(`${first.url}/v2/orders`, { method: 'POST', headers: keys, body: JSON.stringify({ merchantReference: 'before-restart', amountMinor: 1250 }) });
      expect(created.status).toBe(201);
      order = (await created.json()) as { orderId: string };
      const made = await fetch(`${first.url}/v2/webhooks/endpoints?environment=test`, { method: 'POST', headers: member, body: JSON.stringify({ url: 'http://127.0.0.1:3000/webhooks' }) });
      expect(made.status).toBe(201);
      endpoint = (await made.json()) as { id: string; secret: string };
    } finally {
      expect(await first.stop()).toBe(0);
    }

    const second = await spawnMock(['--stateful', '--state', state, '--quiet']);
    try {
      expect(second.printed()).toContain(`MOCK_API_KEY=${t.apiKey}`);
      const read = await fetch(`${second.url}/v2/orders/${order.orderId}`, { headers: keys });
      expect(read.status).toBe(200);
      expect(((await read.json()) as { merchantReference: string }).merchantReference).toBe('before-restart');
      const listed = (await (await fetch(`${second.url}/v2/webhooks/endpoints?environment=test`, { headers: member })).json()) as { data?: Array<{ id: string; url: string }> } | Array<{ id: string; url: string }>;
      const endpoints = Array.isArray(listed) ? listed : (listed.data ?? []);
      expect(endpoints.map((e) => [e.id, e.url])).toEqual([[endpoint.id, 'http://127.0.0.1:3000/webhooks']]);
    } finally {
      await second.stop();
    }
  }, 120_000);
});

describe('npm run mock -- --stateful without --state', () => {
  it('removes its temporary store, secrets.key included, when the terminal closes (SIGHUP)', async () => {
    const mock = await spawnMock(['--stateful', '--quiet']);
    const dir = /store in a temporary folder, removed at exit: (\S+)/.exec(mock.printed())?.[1] ?? '';
    expect(existsSync(path.join(dir, 'secrets.key'))).toBe(true);
    await mock.stop('SIGHUP');
    expect(existsSync(dir)).toBe(false);
  }, 60_000);
});
