// The stateful mock's edges: a new `--state DIR` is owner-only and ignored by git as a whole (it
// holds plaintext keys, the callback secret and the store's secrets key); an existing one is
// left as it is. POST /_mock/webhooks is an unauthenticated relay: listening beyond loopback is
// warned about at start, in both modes, before the port is bound.
import { spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../lib/specs.ts';
import { isLoopbackHost, relayWarning } from './cli.ts';
import { STATE_GITIGNORE, openStateFolder, startStatefulMock } from './stateful.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const d = await mkdtemp(path.join(os.tmpdir(), 'mock-state-folder-'));
  dirs.push(d);
  return d;
}
const git = (cwd: string, ...args: string[]): string => {
  const r = spawnSync('git', ['-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};

describe('--state DIR', () => {
  it('makes a new state folder owner-only, with a .gitignore that keeps all of it, the tenants file included, out of git', async () => {
    const project = await tempDir();
    git(project, 'init', '-q');
    const state = path.join(project, '.mock-state');
    const mock = await startStatefulMock({ port: 0, stateDir: state });
    try {
      expect((await stat(state)).mode & 0o777).toBe(0o700);
      expect(await readFile(path.join(state, '.gitignore'), 'utf8')).toBe(STATE_GITIGNORE);
      expect(STATE_GITIGNORE.split('\n')).toContain('*');
      expect(await readdir(state)).toEqual(expect.arrayContaining(['tenants.json', 'secrets.key']));
      expect(git(project, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    } finally {
      await mock.close();
    }
  });

  it("leaves a folder that exists as it is: the developer's mode, no .gitignore written", async () => {
    const state = path.join(await tempDir(), 'mine');
    await mkdir(state);
    await chmod(state, 0o755);
    expect(await openStateFolder(state)).toBe(false);
    expect((await stat(state)).mode & 0o777).toBe(0o755);
    expect(await readdir(state)).toEqual([]);
    // A new one, its parents made as needed.
    const nested = path.join(path.dirname(state), 'a', 'b', 'state');
    expect(await openStateFolder(nested)).toBe(true);
    expect(await readdir(nested)).toEqual(['.gitignore']);
  });
});

describe('a --host beyond loopback', () => {
  it('is a loopback host for 127.0.0.0/8, ::1 (bracketed or IPv4-mapped) and localhost names, and nothing else', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', '::ffff:127.0.0.1', 'localhost', 'LOCALHOST.', 'app.localhost']) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.2', 'example.com', 'my-laptop', '128.0.0.1']) expect(isLoopbackHost(host), host).toBe(false);
    expect(relayWarning('127.0.0.1')).toBeNull();
    expect(relayWarning('0.0.0.0')).toMatch(/^npm run mock: warning: listening on 0\.0\.0\.0, not a loopback address: POST \/_mock\/webhooks takes no credentials .* \(an open relay\)/);
  });

  for (const mode of [[], ['--stateful']]) {
    it(`is warned about at start, before the port is bound (${mode.length === 0 ? 'stateless' : 'stateful'})`, async () => {
      // The port is taken: the mock warns, then says the port is in use and stops, so no relay is ever open.
      const taken: Server = createServer();
      await new Promise<void>((resolve) => taken.listen(0, '0.0.0.0', resolve));
      const port = (taken.address() as { port: number }).port;
      try {
        const r = spawnSync('npm', ['run', '-s', 'mock', '--', ...mode, '--host', '0.0.0.0', '--port', String(port)], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
        expect(r.status).toBe(1);
        expect(r.stderr.trim().split('\n')).toEqual([relayWarning('0.0.0.0'), `npm run mock: cannot listen on 0.0.0.0:${port}: the port is in use; stop what listens there or set MOCK_PORT to another port`]);
      } finally {
        taken.close();
      }
    });
  }
});
