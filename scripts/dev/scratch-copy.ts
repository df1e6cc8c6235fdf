// A throw-away copy of the repository for the loop's benchmark and test, which edit spec/: the
// files git tracks or would (the working tree as it is), node_modules linked, and a git
// repository of its own whose one commit is the base spec:diff compares with (--base HEAD).
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../lib/specs.ts';

export interface ScratchCopy {
  dir: string;
  remove(): void;
}

export function scratchCopy(): ScratchCopy {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dev-loop-'));
  const files = execFileSync('git', ['ls-files', '-z', '-co', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of files) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    cpSync(path.join(ROOT, file), path.join(dir, file));
  }
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  const git = (...args: string[]): void => void execFileSync('git', ['-c', 'user.name=dev-loop', '-c', 'user.email=dev-loop@localhost', ...args], { cwd: dir, stdio: 'ignore' });
  git('init', '-q');
  git('add', 'spec');
  git('commit', '-q', '-m', 'the base spec:diff compares with');
  // Retried: a process of the loop that was just stopped may still be closing a file in it.
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }) };
}
