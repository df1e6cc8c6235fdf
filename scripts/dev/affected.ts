// Which documents a saved file belongs to: a document itself, or every document that reaches a
// changed common/ file through its $refs (common files refer to each other too).
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { GenerationTarget } from '../generate.ts';
import { ASYNCAPI_DOC, OPENAPI_DOCS, PROBLEM_TYPES, SPEC_DIR } from '../lib/specs.ts';

export interface Affected {
  /** What to regenerate, lint and diff. */
  targets: GenerationTarget[];
  /** Files that belong to no document (spec/breaking-changes.yaml, a README). */
  other: string[];
}

const DOCUMENTS: ReadonlyArray<{ target: GenerationTarget; file: string }> = [
  ...OPENAPI_DOCS.map((d) => ({ target: d.name, file: d.file })),
  { target: 'webhooks', file: ASYNCAPI_DOC },
];

/** The common files that refer to `file` (by its name), directly or through other common files. */
async function commonClosure(file: string): Promise<Set<string>> {
  const dir = path.join(SPEC_DIR, 'common');
  const commons = (await readdir(dir)).filter((f) => /\.ya?ml$/.test(f));
  const texts = new Map(await Promise.all(commons.map(async (f) => [f, await readFile(path.join(dir, f), 'utf8')] as const)));
  const reached = new Set([path.basename(file)]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [name, text] of texts) {
      if (!reached.has(name) && [...reached].some((r) => text.includes(r))) {
        reached.add(name);
        grew = true;
      }
    }
  }
  return reached;
}

export async function affectedBy(files: readonly string[]): Promise<Affected> {
  const targets = new Set<GenerationTarget>();
  const other: string[] = [];
  for (const file of files) {
    const doc = DOCUMENTS.find((d) => d.file === file);
    if (doc) {
      targets.add(doc.target);
      continue;
    }
    if (path.dirname(file) !== path.join(SPEC_DIR, 'common')) {
      other.push(file);
      continue;
    }
    if (file === PROBLEM_TYPES) targets.add('problem-types');
    const reached = await commonClosure(file);
    for (const d of DOCUMENTS) {
      const text = await readFile(d.file, 'utf8');
      if ([...reached].some((name) => text.includes(`common/${name}`))) targets.add(d.target);
    }
  }
  return { targets: [...targets], other };
}
