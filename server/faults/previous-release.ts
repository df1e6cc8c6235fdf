// The previous release (previous-release.commit), built from git beside the current code: its
// tree from `git archive` into a folder under node_modules/.cache (so that its packages resolve
// from this tree's node_modules, which it shares: the test checks its package-lock.json is
// this one's), its server and admin tool bundled as this run bundles the current ones
// (testing/server-bundle.ts).
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildChildBundles, bundleName } from '../testing/server-bundle.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const PROGRAMS = ['server/main.ts', 'server/admin/cli.ts'];

export interface PreviousRelease {
  commit: string;
  /** The release's tree (the servers' working folder). */
  dir: string;
  /** The node arguments that run its server, and its admin tool. */
  server: string[];
  admin: string[];
  /** `npm run admin -- <args>` of that release; its JSON answer. */
  runAdmin(args: string[], env: NodeJS.ProcessEnv): Promise<unknown>;
  remove(): void;
}

/** The commit recorded in previous-release.commit (comments and blank lines aside). */
export function previousReleaseCommit(): string {
  const lines = readFileSync(new URL('./previous-release.commit', import.meta.url), 'utf8').split('\n');
  const commit = lines.map((l) => l.trim()).find((l) => l !== '' && !l.startsWith('#'));
  if (!commit || !/^[0-9a-f]{40}$/.test(commit)) throw new Error('previous-release.commit must hold a full commit id');
  return commit;
}

const git = (args: string[]): Buffer => execFileSync('git', ['-C', ROOT, ...args], { maxBuffer: 512 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] });

interface Lock {
  packages: Record<string, { version?: string; link?: boolean }>;
}

/**
 * The packages of another release's lock that this tree's lock does not install at the same
 * version. None: the release runs on this tree's node_modules (a release may add packages, as
 * long as every one the older one uses stays where it was).
 */
function packagesNotInstalled(older: Lock): string[] {
  const ours = (JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as Lock).packages;
  return Object.entries(older.packages)
    .filter(([name, p]) => name.startsWith('node_modules/') && !p.link && ours[name]?.version !== p.version)
    .map(([name, p]) => `${name.slice('node_modules/'.length)}@${p.version}`);
}

export async function buildPreviousRelease(commit: string = previousReleaseCommit()): Promise<PreviousRelease> {
  try {
    git(['rev-parse', '--verify', '--quiet', `${commit}^{commit}`]);
  } catch {
    throw new Error(`the previous release ${commit} is not in this clone's history (a shallow clone?): git fetch --unshallow, or move previous-release.commit`);
  }
  const missing = packagesNotInstalled(JSON.parse(git(['show', `${commit}:package-lock.json`]).toString('utf8')) as Lock);
  if (missing.length > 0) {
    throw new Error(
      `the previous release ${commit.slice(0, 7)} needs packages this tree's node_modules does not hold at its versions (${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}): ` +
        'move previous-release.commit to a release whose dependencies this tree still installs, or install its own (npm ci in its folder) before this test.',
    );
  }
  const cache = path.join(ROOT, 'node_modules', '.cache', 'previous-release');
  mkdirSync(cache, { recursive: true });
  const dir = mkdtempSync(path.join(cache, `${commit.slice(0, 7)}-`));
  try {
    execFileSync('tar', ['-x', '-C', dir], { input: git(['archive', '--format=tar', commit]) });
    const out = path.join(dir, '.bundle');
    await buildChildBundles(out, { root: dir, programs: PROGRAMS });
    const entry = (p: string): string[] => ['--enable-source-maps', path.join(out, `${bundleName(p)}.mjs`)];
    const admin = entry('server/admin/cli.ts');
    return {
      commit,
      dir,
      server: entry('server/main.ts'),
      admin,
      async runAdmin(args, env) {
        const { stdout } = await promisify(execFile)(process.execPath, [...admin, ...args], { cwd: dir, env: { ...process.env, ...env }, timeout: 60_000 });
        return JSON.parse(stdout) as unknown;
      },
      remove: () => rmSync(dir, { recursive: true, force: true }),
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
