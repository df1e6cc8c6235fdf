// The dev loop's type-checker on a small project of its own (real TypeScript, real file
// watching): the first report, the error a change causes, its fix by deleting the file (which
// TypeScript first reports as "File not found"), and a missing reference that stays an error.
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeTypecheck, startTypecheck, type TypecheckReport } from './typecheck.ts';

let dir: string;
let checker: { stop(): Promise<void> };
const reports: TypecheckReport[] = [];
const waiting: Array<(r: TypecheckReport) => void> = [];

/** The next report from now on. */
const nextReport = (): Promise<TypecheckReport> => new Promise((resolve) => waiting.push(resolve));

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'typecheck-'));
  mkdirSync(path.join(dir, 'src'));
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: 'es2022', module: 'nodenext', types: [] }, include: ['src'] }));
  writeFileSync(path.join(dir, 'src', 'a.ts'), 'export const a: number = 1;\n');
});
afterAll(async () => {
  await checker?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it('reports the project once, then each error a change causes and each fix; a deleted file is a fix, not an error', async () => {
  const first = nextReport();
  checker = startTypecheck((r) => {
    reports.push(r);
    waiting.splice(0).forEach((w) => w(r));
  }, dir);
  expect(await first).toEqual({ total: 0, caused: [], fixed: 0, first: true });

  const caused = nextReport();
  await writeFile(path.join(dir, 'src', 'b.ts'), "export const b: number = 'not a number';\n");
  expect(await caused).toMatchObject({ total: 1, fixed: 0, first: false, caused: [{ file: path.join('src', 'b.ts'), line: 1, col: 14, code: 2322 }] });

  // Before the fix, the check on the root names read before the deletion came first and said
  // "1 error caused by the change": TS6053 File '…/src/b.ts' not found.
  const fixed = nextReport();
  await rm(path.join(dir, 'src', 'b.ts'));
  expect(await fixed).toEqual({ total: 0, caused: [], fixed: 1, first: false });

  const missing = nextReport();
  await writeFile(path.join(dir, 'src', 'c.ts'), '/// <reference path="./missing.d.ts" />\nexport const c = 1;\n');
  expect(await missing).toMatchObject({ total: 1, caused: [{ file: path.join('src', 'c.ts'), code: 6053 }] });
  expect(reports).toHaveLength(4);
}, 60_000);

it('tells the designer the first count, the errors a change caused with their places, and what a change fixed', () => {
  const error = { file: path.join('src', 'b.ts'), line: 1, col: 14, code: 2322, message: "Type 'string' is not assignable to type 'number'.\nmore" };
  expect(describeTypecheck({ total: 0, caused: [], fixed: 0, first: true })).toEqual({ kind: 'info', text: 'type-check: 0 error(s) in the project' });
  expect(describeTypecheck({ total: 1, caused: [error], fixed: 0, first: true }).text).toBe(`type-check: 1 error(s) in the project (${path.join('src', 'b.ts')}:1:14 TS2322: Type 'string' is not assignable to type 'number'.)`);
  expect(describeTypecheck({ total: 3, caused: [error], fixed: 0, first: false })).toEqual({
    kind: 'failed',
    text: 'type-check: 1 error(s) caused by the change (3 in all)',
    errors: [`${path.join('src', 'b.ts')}:1:14 TS2322: Type 'string' is not assignable to type 'number'.`],
  });
  expect(describeTypecheck({ total: 2, caused: [], fixed: 1, first: false })).toEqual({ kind: 'ok', text: '1 error(s) fixed, 2 left' });
});
