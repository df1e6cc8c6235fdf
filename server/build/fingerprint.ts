// What a build was made of, by content: a file saved again unchanged (a checkout, a formatter,
// `touch`) leaves the build up to date, where a modification time would call it stale; a file
// changed by a tool that keeps its old time (an archive, a copy with -p) does not.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** A file's contents as a SHA-256, hex. */
export function contentHash(contents: string | Uint8Array): string {
  return createHash('sha256').update(contents).digest('hex');
}

/** Each file (relative to root) with its content hash; null for one that cannot be read. */
export async function hashFiles(root: string, files: readonly string[]): Promise<Record<string, string | null>> {
  const hashes = await Promise.all(files.map((file) => readFile(path.join(root, file)).then(contentHash, () => null)));
  return Object.fromEntries(files.map((file, i) => [file, hashes[i] ?? null]));
}

/** The first file (relative to root) whose content is not the recorded one (changed, removed), or null. */
export async function firstChanged(root: string, recorded: Readonly<Record<string, string | null>>): Promise<string | null> {
  const now = await hashFiles(root, Object.keys(recorded));
  return Object.keys(recorded).find((file) => now[file] !== recorded[file]) ?? null;
}
