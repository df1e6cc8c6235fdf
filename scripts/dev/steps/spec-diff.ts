// spec:diff of the saved documents against the last release, in this process: the release's
// documents are loaded once (git archive + bundles), the new ones come from the regeneration.
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { classify, diffAsyncApi, diffOpenApi, loadSpecDocs, readAcknowledgements, resolveBase, specAtRef, type Change } from '../../lib/spec-diff.ts';
import { ROOT, SPEC_DIR } from '../../lib/specs.ts';

type Json = Record<string, unknown>;

export interface Release {
  ref: string;
  why: string;
  docs: Map<string, Json>;
}

/** The documents of the base spec:diff uses (--base, else main, a spec-v* tag or HEAD^1); undefined if none. */
export async function loadRelease(given: string | undefined): Promise<Release | undefined> {
  const base = await resolveBase(ROOT, given);
  if (base === undefined) return undefined;
  const dir = await specAtRef(base.ref, ROOT);
  try {
    const { openapi, asyncapi } = await loadSpecDocs(dir);
    return { ...base, docs: new Map([...openapi, ...asyncapi]) };
  } finally {
    await rm(path.dirname(dir), { recursive: true, force: true });
  }
}

/** Lines for the terminal: each breaking change with its reason, and the count of the others. */
export async function diffAgainst(release: Release, resolved: ReadonlyMap<string, Json>): Promise<string[]> {
  const changes: Change[] = [];
  for (const [api, doc] of resolved) {
    const old = release.docs.get(api);
    if (old === undefined) changes.push({ api, where: 'document', pointer: '', description: '[Added] a new document', breaking: false });
    else changes.push(...(api === 'webhooks' ? diffAsyncApi(api, old, doc) : diffOpenApi(api, old, doc)));
  }
  const report = classify(changes, await readAcknowledgements(path.join(SPEC_DIR, 'breaking-changes.yaml')));
  const accepted = new Map(report.acknowledged.map((a) => [a.change, a.by.reason.trim()]));
  const lines = changes
    .filter((c) => c.breaking)
    .map((c) => {
      const reason = accepted.get(c);
      return `${reason === undefined ? '✖ BREAKING' : '✔ breaking, accepted'} ${c.api} ${c.where}${c.pointer === '' ? '' : ` ${c.pointer}`}: ${c.description}${reason === undefined ? '' : ` (${reason.split('\n')[0]})`}`;
    });
  const others = changes.filter((c) => !c.breaking);
  const summary = `${changes.length - others.length} breaking (${report.unacknowledged.length} not accepted in spec/breaking-changes.yaml), ${others.length} not breaking, against ${release.ref}`;
  const sample = others.slice(0, 5).map((c) => `· ${c.api} ${c.where}${c.pointer === '' ? '' : ` ${c.pointer}`}: ${c.description}`);
  return [summary, ...lines, ...sample, ...(others.length > 5 ? [`· … and ${others.length - 5} more (npm run spec:diff -- --all)`] : [])];
}
