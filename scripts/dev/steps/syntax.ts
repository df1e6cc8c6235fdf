// The first check of a save, in this process and in milliseconds: is each saved file YAML?
// Errors name the file, line and column, and the line itself.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { ROOT } from '../../lib/specs.ts';

export async function yamlErrors(files: readonly string[]): Promise<string[]> {
  const errors: string[] = [];
  for (const file of files) {
    const text = await readFile(file, 'utf8');
    const doc = parseDocument(text, { prettyErrors: true });
    for (const e of doc.errors) {
      const [line, col] = e.linePos?.[0] ? [e.linePos[0].line, e.linePos[0].col] : ['?', '?'];
      errors.push(`${path.relative(ROOT, file)}:${line}:${col} ${e.message.split('\n')[0]}`);
      const source = typeof line === 'number' ? text.split('\n')[line - 1] : undefined;
      if (source !== undefined) errors.push(`    ${line} | ${source}`);
    }
  }
  return errors;
}
