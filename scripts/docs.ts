// npm run docs: an HTML reference per contract document (redocly build-docs: Redoc 3 renders the
// OpenAPI documents and the AsyncAPI 3 webhooks document alike, scripts inlined so the pages need
// no CDN) and a landing page generated from the documents' own `info`, into DOCS_DIR (default
// docs/api/, git-ignored), which the server serves as static files on /docs.
//   npm run docs                 every page; built beside the folder and swapped in, so a running
//                                server never reads a half-built reference
//   npm run docs -- webhooks     only the named pages (and the index), each written atomically
//   --if-stale (npm start)       only when the pages are missing or a source's content changed
//                                since they were built (recorded in their folder, .sources.json)
// The webhooks page gets its signature worked example here, computed from the document's own
// example with the service's signing code (scripts/lib/docs-webhooks.ts), never typed by hand.
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { firstChanged, hashFiles } from '../server/build/fingerprint.ts';
import { loadConfig } from '../server/config.ts';
import { landingPage, readDocumentInfo } from './lib/docs-index.ts';
import { webhooksWithWorkedExample } from './lib/docs-webhooks.ts';
import { ASYNCAPI_DOC, OPENAPI_DOCS, ROOT, SPEC_DIR, bin } from './lib/specs.ts';
import { run } from './lib/run.ts';

export const DOCS_DIR = loadConfig().docsDir;

export interface ContractDocument {
  /** Page name: `<name>.html` under /docs. */
  name: string;
  file: string;
  kind: 'openapi' | 'asyncapi';
}

/** Every document with a page, in the order of the landing page. */
export const DOCUMENTS: readonly ContractDocument[] = [
  ...OPENAPI_DOCS.map((d) => ({ name: d.name, file: d.file, kind: 'openapi' as const })),
  { name: 'webhooks', file: ASYNCAPI_DOC, kind: 'asyncapi' },
];

async function redocly(args: string[], what: string): Promise<void> {
  const result = await run(bin('redocly'), args);
  if (result.code !== 0) throw new Error(`redocly ${args[0]} ${what} failed:\n${result.stderr}`);
}

/** One document's page, `<outDir>/<name>.html`, written beside and renamed into place. */
export async function buildDocument(doc: ContractDocument, outDir: string = DOCS_DIR): Promise<void> {
  const out = path.join(outDir, `${doc.name}.html`);
  const partial = `${out}.building-${process.pid}`;
  const source = path.join(outDir, `.${doc.name}.source-${process.pid}.json`);
  try {
    let input = doc.name;
    if (doc.kind === 'asyncapi') {
      // The document bundled to one file (its ./common/ refs resolved), plus the worked example.
      await redocly(['bundle', doc.file, '--ext', 'json', '-o', source], doc.name);
      const bundled = JSON.parse(await readFile(source, 'utf8')) as Record<string, unknown>;
      await writeFile(source, JSON.stringify(await webhooksWithWorkedExample(bundled, doc.file)));
      input = source;
    }
    await redocly(['build-docs', input, '--inlineBundle', '-o', partial], doc.name);
    await rename(partial, out);
  } finally {
    await rm(partial, { force: true });
    await rm(source, { force: true });
  }
}

/** The landing page, from each document's `info`. */
export async function buildIndex(outDir: string = DOCS_DIR): Promise<void> {
  const infos = await Promise.all(DOCUMENTS.map(async (d) => ({ ...d, info: await readDocumentInfo(d.file) })));
  const out = path.join(outDir, 'index.html');
  await writeFile(`${out}.building-${process.pid}`, landingPage(infos));
  await rename(`${out}.building-${process.pid}`, out);
}

/**
 * Rebuilds one document's page (npm run dev, after a change to that document), written beside
 * it and renamed over it, so a reader gets the old page or the new one, never half of one.
 */
export async function buildDoc(name: string, outDir: string = DOCS_DIR): Promise<string> {
  const doc = DOCUMENTS.find((d) => d.name === name);
  if (!doc) throw new Error(`no document named ${name}`);
  await mkdir(outDir, { recursive: true });
  await buildDocument(doc, outDir);
  return path.join(outDir, `${doc.name}.html`);
}

/** Every page into a fresh folder, swapped in whole, with the record of what it was built from. */
export async function buildDocs(outDir: string = DOCS_DIR): Promise<void> {
  // Hashed before the build: a source saved while it runs makes the pages stale.
  const sources = await hashFiles(ROOT, await docSources());
  const scratch = `${outDir}.building-${process.pid}`;
  await rm(scratch, { recursive: true, force: true });
  await mkdir(scratch, { recursive: true });
  try {
    // Two at a time: each is one redocly process, and the machine has few cores.
    for (let i = 0; i < DOCUMENTS.length; i += 2) {
      await Promise.all(DOCUMENTS.slice(i, i + 2).map((doc) => buildDocument(doc, scratch)));
    }
    await buildIndex(scratch);
    await writeSourcesRecord(scratch, sources);
    await rm(outDir, { recursive: true, force: true });
    await rename(scratch, outDir);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** The named pages and the index, into the existing folder. */
export async function buildPages(names: readonly string[], outDir: string = DOCS_DIR): Promise<void> {
  const docs = names.map((name) => {
    const doc = DOCUMENTS.find((d) => d.name === name);
    if (!doc) throw new Error(`no document named ${name}; one of ${DOCUMENTS.map((d) => d.name).join(', ')}`);
    return doc;
  });
  await mkdir(outDir, { recursive: true });
  await Promise.all(docs.map((doc) => buildDocument(doc, outDir)));
  await buildIndex(outDir);
}

/** Where the pages' folder records what they were built from (content hashes); not a page, never served. */
const SOURCES_RECORD = '.sources.json';

/** The files the pages are made of, relative to root: the specs, the signing code (the worked example) and redocly.yaml. */
export async function docSources(root: string = ROOT, specDir: string = SPEC_DIR): Promise<string[]> {
  const files = [...(await filesUnder(specDir)), ...(await filesUnder(path.join(root, 'signing'))), path.join(root, 'redocly.yaml')];
  return files.map((file) => path.relative(root, file)).sort();
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

/** Records in outDir the content hashes of the sources (relative to the root) its pages were built from. */
export async function writeSourcesRecord(outDir: string, sources: Readonly<Record<string, string | null>>): Promise<void> {
  await writeFile(path.join(outDir, SOURCES_RECORD), `${JSON.stringify(sources, null, 2)}\n`);
}

/**
 * True when a page is missing, or the sources are not the ones the pages were built from: a file
 * added or removed, or one whose content changed (a file saved again unchanged is not a change).
 */
export async function docsStale(outDir: string = DOCS_DIR, root: string = ROOT, specDir: string = SPEC_DIR): Promise<boolean> {
  const pages = ['index', ...DOCUMENTS.map((d) => d.name)].map((name) => path.join(outDir, `${name}.html`));
  if (pages.some((page) => !existsSync(page))) return true;
  const recorded = await readFile(path.join(outDir, SOURCES_RECORD), 'utf8').then(
    (text) => JSON.parse(text) as Record<string, string | null>,
    () => null,
  );
  if (recorded === null) return true;
  if ((await docSources(root, specDir)).join('\n') !== Object.keys(recorded).sort().join('\n')) return true;
  return (await firstChanged(root, recorded)) !== null;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const names = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  if (process.argv.includes('--if-stale') && !(await docsStale())) process.exit(0);
  const started = Date.now();
  if (names.length > 0) await buildPages(names);
  else await buildDocs();
  const what = names.length > 0 ? names.map((n) => `${n}.html`).join(', ') : `${DOCUMENTS.length} pages`;
  console.log(`API reference (${what}) written to ${path.relative(process.cwd(), DOCS_DIR) || '.'}/index.html in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
