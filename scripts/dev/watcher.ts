// Saves in spec/: one callback per burst of events (an editor's save is often a write and a
// rename), with the files whose content changed since the last save seen. Touching a file
// without changing it is no change, and an empty file is a save still being written (a save
// that truncates, then writes: on a busy machine the two can be a burst apart), never a spec.
import { readdirSync, watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

const BURST_MS = 40;

export function watchSpec(specDir: string, onChange: (files: string[]) => void): () => void {
  const seen = new Map<string, string>();
  let pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;

  const flush = async (): Promise<void> => {
    const batch = [...pending];
    pending = new Set();
    const changed: string[] = [];
    for (const file of batch) {
      const text = await readFile(file, 'utf8').catch(() => null);
      if (text === null || text.length === 0 || seen.get(file) === text) continue;
      seen.set(file, text);
      changed.push(file);
    }
    if (changed.length > 0) onChange(changed.sort());
  };

  // One watch per folder, not a recursive one: on Linux that watches each file, and loses a
  // file an editor (or sed -i) replaces by renaming a new one over it.
  const folders = [specDir, ...readdirSync(specDir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => path.join(specDir, e.name))];
  const watchers = folders.map((dir) =>
    watch(dir, (_event, name) => {
      if (name === null || !/\.ya?ml$/.test(name)) return;
      pending.add(path.join(dir, name));
      clearTimeout(timer);
      timer = setTimeout(() => void flush(), BURST_MS);
    }),
  );
  return () => {
    clearTimeout(timer);
    for (const w of watchers) w.close();
  };
}
