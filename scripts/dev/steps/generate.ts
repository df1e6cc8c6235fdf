// Regeneration of what a save changed, in this process: the changed documents' files only
// (scripts/generate.ts generateTargets, in memory), written where they differ from generated/.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Generated } from '../../generate.ts';
import { GENERATED_DIR } from '../../lib/specs.ts';

export interface Regenerated {
  /** Files under generated/ whose content changed (and were written). */
  written: string[];
  /** Whether a running server behaves differently: see needsRestart. */
  restartServer: boolean;
  /** Whether a generated .ts file changed (a type-check follows). */
  typesChanged: boolean;
  /** The resolved documents, for spec:diff. */
  resolved: Map<string, Record<string, unknown>>;
}

// Keys that document and never validate: the server reads its documents from disk per request
// (/openapi/*.json) and renders docs from the pages, so a change of these alone needs no restart.
const ANNOTATIONS = new Set(['example', 'examples', 'description', 'summary', 'x-generated']);

function withoutAnnotations(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutAnnotations);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(Object.entries(node).filter(([k]) => !ANNOTATIONS.has(k)).map(([k, v]) => [k, withoutAnnotations(v)]));
}

/** TypeScript without its comments (openapi-typescript writes descriptions and examples as JSDoc). */
const withoutComments = (ts: string): string => ts.replace(/\/\*\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');

/** Does the server need a restart to behave as the new file says? */
export function needsRestart(file: string, before: string | null, after: string): boolean {
  if (before === null) return true;
  if (file.endsWith('.bundled.json') || file.endsWith('.md')) return false; // for tools, not read by the server
  if (file.endsWith('.json')) return JSON.stringify(withoutAnnotations(JSON.parse(before))) !== JSON.stringify(withoutAnnotations(JSON.parse(after)));
  return withoutComments(before) !== withoutComments(after);
}

/** Writes the files of a generation that differ from generated/, and says what that changes. */
export async function writeGenerated({ files, resolved }: Generated, outDir: string = GENERATED_DIR): Promise<Regenerated> {
  const result: Regenerated = { written: [], restartServer: false, typesChanged: false, resolved };
  for (const [file, content] of files) {
    const target = path.join(outDir, file);
    const before = await readFile(target, 'utf8').catch(() => null);
    if (before === content) continue;
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, content);
    result.written.push(file);
    result.restartServer ||= needsRestart(file, before, content);
    result.typesChanged ||= file.endsWith('.ts') && (before === null || withoutComments(before) !== withoutComments(content));
  }
  return result;
}
