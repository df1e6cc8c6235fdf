// Small tmpfs mounts for the disk fault tests (root only). A test that cannot mount is skipped
// with the reason, never silently passed.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface Tmpfs {
  dir: string;
  remount(mode: 'ro' | 'rw'): void;
  unmount(): void;
}

/** A tmpfs of sizeBytes, or the reason it cannot be mounted here. */
export function mountTmpfs(sizeBytes: number): Tmpfs | string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fault-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return `cannot mount a tmpfs (root needed): ${String((err as { stderr?: Buffer }).stderr ?? (err as Error).message).trim()}`;
  }
  return {
    dir,
    remount: (mode) => execFileSync('mount', ['-o', `remount,${mode}`, dir], { stdio: 'pipe' }),
    unmount() {
      try {
        execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
