// npm run bench:dev: how long from a save in spec/ to the change being served by `npm run dev`.
// Runs the loop on a scratch copy of the repository (never the real spec/), waits for its
// first type-check, then:
//   - EDITS (10) edits of an example value (getOrder's `paid` example, the one the mock answers
//     with): save → the mock's answer changed, → the docs page changed, → the server serving the
//     new document (GET /openapi/orders.json);
//   - SCHEMA_EDITS (5) edits of a schema keyword (IdempotencyKey maxLength): save → the server
//     restarted (another process answers through the loop's port).
// Prints each edit and p50/p95.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { until } from '../../testing/until.ts';
import { driveLoop, type DrivenLoop } from '../dev/driver.ts';
import { scratchCopy } from '../dev/scratch-copy.ts';
import { machine } from './lib.ts';

const EDITS = Number(process.env.EDITS ?? 10);
const SCHEMA_EDITS = Number(process.env.SCHEMA_EDITS ?? 5);
const ORDER_ID = '3f0c9a8e-6b1d-4c2e-9f7a-2d5b8e1c4a90';
const MOCK_HEADERS = { 'x-api-key': 'pk_test_bench', 'x-api-hash': 'sk_test_bench' };

const percentile = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
};
const seconds = (ms: number): string => (ms / 1000).toFixed(2);

/** The getOrder `paid` example's merchantReference line, set to `value`. */
function withExampleValue(text: string, value: string): string {
  const op = text.indexOf('operationId: getOrder');
  const at = text.indexOf('merchantReference: ', op);
  const end = text.indexOf('\n', at);
  return `${text.slice(0, at)}merchantReference: ${value}${text.slice(end)}`;
}

const body = async (url: string, headers: Record<string, string> = {}): Promise<string> => (await fetch(url, { headers })).text();
const upstreamPid = async (url: string): Promise<string | null> => (await fetch(url)).headers.get('x-dev-upstream-pid');

async function since(t0: number, check: () => Promise<boolean>): Promise<number> {
  await until(check, 'the change served', 120_000);
  return performance.now() - t0;
}

async function exampleEdit(loop: DrivenLoop, file: string, i: number): Promise<Record<string, number>> {
  const value = `cart-7781-bench-${i}`;
  const text = withExampleValue(await readFile(file, 'utf8'), value);
  const done = loop.next('change-done');
  const t0 = performance.now();
  await writeFile(file, text);
  const [mock, docs, server] = await Promise.all([
    since(t0, async () => (await body(`${loop.mockUrl}/v2/orders/${ORDER_ID}`, MOCK_HEADERS)).includes(value)),
    since(t0, async () => (await body(`${loop.serverUrl}/docs/orders.html`)).includes(value)),
    since(t0, async () => (await body(`${loop.serverUrl}/openapi/orders.json`)).includes(value)),
  ]);
  await done;
  return { mock, docs, server, all: Math.max(mock, docs, server) };
}

async function schemaEdit(loop: DrivenLoop, file: string, i: number): Promise<Record<string, number>> {
  const text = await readFile(file, 'utf8');
  const next = text.replace(/(IdempotencyKey:[\s\S]*?maxLength: )(\d+)/, (_m, head: string) => `${head}${i % 2 === 0 ? 255 : 254}`);
  const before = await upstreamPid(`${loop.serverUrl}/healthz`);
  const done = loop.next('change-done');
  const t0 = performance.now();
  await writeFile(file, next);
  const restarted = await since(t0, async () => (await upstreamPid(`${loop.serverUrl}/healthz`)) !== before);
  await done;
  return { restarted };
}

function report(title: string, rows: Array<Record<string, number>>): void {
  if (rows.length === 0) return;
  const keys = Object.keys(rows[0] ?? {});
  console.log(`\n${title}\n| edit | ${keys.join(' s | ')} s |\n|---|${keys.map(() => '---:').join('|')}|`);
  rows.forEach((r, i) => console.log(`| ${i + 1} | ${keys.map((k) => seconds(r[k] ?? NaN)).join(' | ')} |`));
  for (const p of [50, 95]) console.log(`| p${p} | ${keys.map((k) => seconds(percentile(rows.map((r) => r[k] ?? NaN), p))).join(' | ')} |`);
}

const copy = scratchCopy();
let loop: DrivenLoop | undefined;
try {
  console.log(`bench:dev on ${machine()}, load average ${(await import('node:os')).loadavg().map((l) => l.toFixed(1)).join(' ')}; scratch copy ${copy.dir}`);
  const started = performance.now();
  loop = await driveLoop(copy.dir);
  console.log(`loop serving after ${seconds(performance.now() - started)} s; waiting for its first type-check`);
  if (!loop.seen('typecheck')) await loop.next('typecheck');
  console.log(`first type-check done after ${seconds(performance.now() - started)} s`);
  const file = path.join(copy.dir, 'spec', 'orders.openapi.yaml');
  const examples: Array<Record<string, number>> = [];
  for (let i = 1; i <= EDITS; i++) examples.push(await exampleEdit(loop, file, i));
  report(`example value edits (save → serving the new value); "server" is GET /openapi/orders.json, the server is not restarted for an annotation`, examples);
  const schemas: Array<Record<string, number>> = [];
  for (let i = 1; i <= SCHEMA_EDITS; i++) schemas.push(await schemaEdit(loop, file, i));
  report('schema keyword edits (save → the replacement server answering)', schemas);
} finally {
  const code = await loop?.stop();
  // VERBOSE=1: the loop's own account of each save (its steps and their times).
  if (loop !== undefined && (code !== 0 || process.env.VERBOSE === '1')) console.error(`the loop exited with ${code}:\n${loop.output()}`);
  copy.remove();
}
