// A folder of bundles replaced whole, never file by file: each build is written into a folder of
// its own under `<out>.builds/`, and `<out>` is a symbolic link to the current one, replaced by
// one rename. A reader sees the old build or the new one; a server started from `<out>` runs from
// the build's real folder (node resolves the link once, at start), so its lazily loaded chunks
// (the sending thread, the PostgreSQL store) stay the ones it was built with after a rebuild.
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, readlink, rename, rm, symlink } from 'node:fs/promises';
import path from 'node:path';

/**
 * Builds kept beside the current one: a server started from one of them still finds its lazily
 * loaded chunks after that many rebuilds. Older ones are removed (nothing tells which are still
 * running; a server is restarted far more often than rebuilt three times under it).
 */
const EARLIER_BUILDS_KEPT = 2;

/** Where the builds of `out` are written. */
export function buildsFolder(out: string): string {
  return `${out}.builds`;
}

/** A build's folder name: later builds sort after earlier ones. */
function buildName(at: number): string {
  return `${at.toString(36).padStart(10, '0')}-${randomBytes(3).toString('hex')}`;
}

/** A new, empty folder for one build of `out`. */
export async function newBuildFolder(out: string): Promise<string> {
  const folder = path.join(buildsFolder(out), buildName(Date.now()));
  await mkdir(folder, { recursive: true });
  return folder;
}

/**
 * Makes `out` the finished build in `folder`, in one rename of a link; then removes the builds
 * older than the kept ones. A folder at `out` from before builds were linked is moved among the
 * builds first (the one moment `out` is missing).
 */
export async function makeCurrent(out: string, folder: string): Promise<void> {
  const link = `${out}.${randomBytes(6).toString('hex')}.link`;
  // Relative: the checkout can be moved with its build (staleReason notices the move).
  await symlink(path.relative(path.dirname(out), folder), link, 'junction');
  try {
    const existing = await lstat(out).catch(() => null);
    // Named as the oldest build, so that it is the first removed. A build beside this one may
    // have moved it already.
    if (existing?.isDirectory()) await rename(out, path.join(buildsFolder(out), buildName(0))).catch(unlessMissing);
    await rename(link, out);
  } finally {
    await rm(link, { force: true });
  }
  await removeOldBuilds(out);
}

function unlessMissing(err: unknown): void {
  if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
}

async function removeOldBuilds(out: string): Promise<void> {
  const current = path.basename(await readlink(out));
  const older = (await readdir(buildsFolder(out))).filter((name) => name < current).sort();
  for (const name of older.slice(0, Math.max(0, older.length - EARLIER_BUILDS_KEPT))) {
    await rm(path.join(buildsFolder(out), name), { recursive: true, force: true });
  }
}
