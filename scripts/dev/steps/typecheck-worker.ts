// The type-checker of `npm run dev`, in a worker thread of the loop's process: TypeScript's
// watch API with a semantic-diagnostics builder keeps the program between checks and re-checks
// only the files a change affects (a generated type file the save rewrote, and its importers).
// Each finished check posts every error of the project; the loop tells which are new.
import { existsSync } from 'node:fs';
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
/** The check ran on root names that still held a file since deleted (see below). */
let stale = false;

/**
 * TS6053 "File '…' not found" for a root file (a global diagnostic: no file holds the reference)
 * that no longer exists: the file's own watcher started a check on the root names read before
 * the deletion; the directory watcher's re-read of tsconfig's `include` starts another check
 * right after, which is the one to report. Reporting this one told the designer that deleting a
 * file caused an error. A reference to a missing file inside a file is still an error.
 */
function deletedRoot(d: ts.Diagnostic): boolean {
  if (d.code !== 6053 || d.file !== undefined) return false;
  const named = /'(.+)'/.exec(ts.flattenDiagnosticMessageText(d.messageText, '\n'))?.[1];
  return named !== undefined && !existsSync(named);
}

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

/**
 * TypeScript reports a check's end before it sets up the watchers the check calls for (the first
 * check's directory watchers for tsconfig's `include` come after "Found N errors"). Posting at
 * once let the loop (and a test) change a file before its directory was watched, and the change
 * was never seen; the watchers are set up synchronously after the report, so a macrotask later
 * they are in place.
 */
function postAfterWatchersAreSet(found: TsError[]): void {
  setImmediate(() => parentPort?.postMessage({ errors: found }));
}

const host = ts.createWatchCompilerHost(
  path.join(root, 'tsconfig.json'),
  { noEmit: true },
  ts.sys,
  ts.createSemanticDiagnosticsBuilderProgram,
  (d) => {
    if (deletedRoot(d)) stale = true;
    else if (d.category === ts.DiagnosticCategory.Error) errors.push(toError(d));
  },
  (d) => {
    if (STARTED.has(d.code)) {
      errors = [];
      stale = false;
    }
    if (FINISHED.has(d.code) && !stale) postAfterWatchersAreSet(errors);
  },
);
ts.createWatchProgram(host);
