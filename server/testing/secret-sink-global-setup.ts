// vitest globalSetup: a secrets sink for the whole run (see secret-sink.ts). Teardown greps
// every file in it for secret shapes and fails the run naming the file and the kind of secret
// (never the value), then removes the folder.
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { findSecrets } from './secret-sink.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    secretSink: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'secret-sink-'));
  project.provide('secretSink', dir);
  return async () => {
    const leaks: string[] = [];
    let bytes = 0;
    for (const name of await readdir(dir)) {
      const text = await readFile(path.join(dir, name), 'utf8');
      bytes += text.length;
      for (const f of findSecrets(text)) leaks.push(`${f.kind} (${f.start}) in ${name}`);
    }
    await rm(dir, { recursive: true, force: true });
    if (leaks.length > 0) {
      process.exitCode = 1; // vitest reports an error thrown here but would still exit 0
      throw new Error(`secrets in the run's log lines, error bodies or metrics (${leaks.length}):\n${[...new Set(leaks)].slice(0, 20).join('\n')}`);
    }
    process.stdout.write(`secret sink: ${bytes} bytes of log lines, error bodies and metrics checked, no secret found\n`);
  };
}
