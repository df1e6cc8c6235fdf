import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { until } from '../../testing/until.ts';
import { watchSpec } from './watcher.ts';

let dir = '';
let stop = (): void => undefined;
afterEach(() => {
  stop();
  rmSync(dir, { recursive: true, force: true });
});

it('never reports an empty file (a save truncated and not yet written): a later save is reported alone', async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'watch-spec-'));
  const reported: string[][] = [];
  stop = watchSpec(dir, (files) => reported.push(files.map((f) => path.basename(f))));
  writeFileSync(path.join(dir, 'truncated.yaml'), '');
  // The marker: a real save after the empty one.
  writeFileSync(path.join(dir, 'saved.yaml'), 'openapi: 3.1.0\n');
  await until(() => reported.flat().includes('saved.yaml'), () => `saved.yaml reported (reported ${JSON.stringify(reported)})`);
  expect(reported.flat()).toEqual(['saved.yaml']);
  // Once written, the same file is a save.
  writeFileSync(path.join(dir, 'truncated.yaml'), 'openapi: 3.1.0\n');
  await until(() => reported.flat().includes('truncated.yaml'), 'truncated.yaml reported once written');
});
