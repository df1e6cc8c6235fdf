// The type-checker of `npm run dev`, in a worker thread of the loop's process: TypeScript's
// watch API with a semantic-diagnostics builder keeps the program between checks and re-checks
// only the files a change affects (a generated type file the save rewrote, and its importers).
// Each finished check posts every error of the project; the loop tells which are new.
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import ts from 'typescript';

export interface TsError {
  file: string;
  line: number;
  col: number;
  code: number;
  message: string;
}

const { root } = workerData as { root: string };
let errors: TsError[] = [];

function toError(d: ts.Diagnostic): TsError {
  const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
  if (!d.file || d.start === undefined) return { file: '', line: 0, col: 0, code: d.code, message };
  const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
  return { file: path.relative(root, d.file.fileName), line: line + 1, col: character + 1, code: d.code, message };
}

// 6031 "Starting compilation in watch mode", 6032 "File change detected": a check begins.
// 6193/6194 "Found N error(s). Watching for file changes.": it ended.
const STARTED = new Set([6031, 6032]);
const FINISHED = new Set([6193, 6194]);

const host = ts.createWatchCompilerHost(
  path.join(root, 'tsconfig.json'),
  { noEmit: true },
  ts.sys,
  ts.createSemanticDiagnosticsBuilderProgram,
  (d) => {
    if (d.category === ts.DiagnosticCategory.Error) errors.push(toError(d));
  },
  (d) => {
    if (STARTED.has(d.code)) errors = [];
    if (FINISHED.has(d.code)) parentPort?.postMessage({ errors });
  },
);
ts.createWatchProgram(host);
