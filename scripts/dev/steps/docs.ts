// The docs pages of the saved documents, and the landing page (it shows each document's info),
// built into a staging folder while the save is checked, published (renamed into the served
// folder) only if it passes.
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { buildDoc, buildIndex } from '../../docs.ts';

export interface StagedPages {
  publish(): Promise<string[]>;
  discard(): Promise<void>;
}

export async function stagePages(names: readonly string[], docsDir: string): Promise<StagedPages> {
  // The server serves only <docsDir>/<name>.html: a subfolder is never served.
  const staging = path.join(docsDir, `.staging-${process.pid}-${Date.now()}`);
  await mkdir(staging, { recursive: true });
  try {
    await Promise.all([...names.map((n) => buildDoc(n, staging)), buildIndex(staging)]);
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw err;
  }
  return {
    async publish() {
      for (const page of [...names, 'index']) await rename(path.join(staging, `${page}.html`), path.join(docsDir, `${page}.html`));
      await rm(staging, { recursive: true, force: true });
      return [...names];
    },
    discard: () => rm(staging, { recursive: true, force: true }),
  };
}
