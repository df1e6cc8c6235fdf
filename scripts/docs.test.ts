// docs --if-stale (npm start) on a scratch tree: the pages are stale when missing, unrecorded, or
// when a source's content changed or a source was added; a source saved again unchanged leaves
// them up to date. No page is built here (docs.e2e.test.ts builds them).
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashFiles } from '../server/build/fingerprint.ts';
import { DOCUMENTS, docSources, docsStale, writeSourcesRecord } from './docs.ts';

let root: string;
let spec: string;
let out: string;

async function write(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(path.join(root, file)), { recursive: true });
  await writeFile(path.join(root, file), text);
}

/** The pages (empty) and the record of the sources as they are now: what buildDocs leaves. */
async function built(): Promise<void> {
  await mkdir(out, { recursive: true });
  for (const name of ['index', ...DOCUMENTS.map((d) => d.name)]) await writeFile(path.join(out, `${name}.html`), '');
  await writeSourcesRecord(out, await hashFiles(root, await docSources(root, spec)));
}

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'docs-stale-'));
  spec = path.join(root, 'spec');
  out = path.join(root, 'docs', 'api');
  await write('spec/orders.openapi.yaml', 'openapi: 3.1.0\n');
  await write('spec/common/problem-types.yaml', 'types: []\n');
  await write('signing/signature.ts', 'export {};\n');
  await write('redocly.yaml', 'extends: []\n');
});
afterEach(() => rm(root, { recursive: true, force: true }));

describe('docsStale', () => {
  it('no pages, or pages without a record: stale; just built: up to date', async () => {
    expect(await docsStale(out, root, spec)).toBe(true);
    await built();
    expect(await docsStale(out, root, spec)).toBe(false);
    await rm(path.join(out, '.sources.json'));
    expect(await docsStale(out, root, spec)).toBe(true);
  });

  it('a source saved again unchanged: up to date; its content changed: stale', async () => {
    await built();
    const later = new Date(Date.now() + 60_000);
    await utimes(path.join(spec, 'common', 'problem-types.yaml'), later, later);
    expect(await docsStale(out, root, spec)).toBe(false);
    await write('signing/signature.ts', 'export const changed = 1;\n');
    expect(await docsStale(out, root, spec)).toBe(true);
  });

  it('a source added or removed, or a page missing: stale', async () => {
    await built();
    await write('spec/common/new.yaml', 'x: 1\n');
    expect(await docsStale(out, root, spec)).toBe(true);
    await rm(path.join(spec, 'common', 'new.yaml'));
    expect(await docsStale(out, root, spec)).toBe(false);
    await rm(path.join(spec, 'orders.openapi.yaml'));
    expect(await docsStale(out, root, spec)).toBe(true);
    await built();
    await rm(path.join(out, 'webhooks.html'));
    expect(await docsStale(out, root, spec)).toBe(true);
  });
});
