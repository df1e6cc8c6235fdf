// Property-based fuzzing of every operation of every bundled OpenAPI document against the real
// server over HTTP: arbitrary JSON, wrong types, huge and deeply nested values, unicode edge
// cases, duplicate keys and prototype-pollution keys, in the body, the path and the query.
// Properties: no answer is a 5xx; every error answer is problem+json valid against the
// contract's Problem schema with a known type and its status; the store is byte-for-byte
// unchanged by every refused request. Used by fuzz.test.ts (fixed seed, few runs) and
// scripts/fuzz.ts (npm run fuzz: more runs, any seed).
import { createHash } from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { PROBLEM_TYPE_BASE, problemTypes } from '../../generated/problem-types.ts';
import { createAjv } from '../contract/ajv.ts';
import { API_NAMES, loadDocument, loadOperations, type OperationSpec } from '../contract/operations.ts';
import { startTestServer, type TestServer, type TestTenant } from '../testing/harness.ts';

export interface FuzzOptions {
  seed: number;
  /** Runs per operation. */
  runs: number;
  /** Progress and findings (default: nothing). */
  log?: (line: string) => void;
}

export interface FuzzFinding {
  operation: string;
  request: { method: string; url: string; body: string | undefined };
  status: number;
  why: string;
  answer: string;
}

export interface FuzzResult {
  requests: number;
  byStatus: Record<string, number>;
  findings: FuzzFinding[];
}

interface FuzzRequest {
  pathValues: string[];
  query: Array<[string, string]>;
  body: string | undefined;
  contentType: string;
}

const problemSchema = (loadDocument('transactions') as { components: { schemas: Record<string, unknown> } }).components.schemas.Problem;
const validateProblem = createAjv().compile(problemSchema as object);

const deep = (depth: number, open: string, close: string): string => open.repeat(depth) + close.repeat(depth);

/** JSON texts a parser or a validator might trip on. */
const hostileJson: fc.Arbitrary<string> = fc.oneof(
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.constantFrom('null', '[]', '{}', '"text"', '0', '-0', '1e309', '-1e-400', 'true', '123456789012345678901234567890', '"\\u0000"', '"\\ud800"', '"\\udfff\\ud800"'),
  fc.integer({ min: 1_000, max: 20_000 }).map((d) => deep(d, '[', ']')),
  fc.integer({ min: 1_000, max: 20_000 }).map((d) => `${'{"a":'.repeat(d)}1${'}'.repeat(d)}`),
  fc.constantFrom('{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"polluted":true}}}', '{"__proto__":null,"amount":1}', '{"prototype":1,"toString":1,"valueOf":"x","hasOwnProperty":2}'),
  fc.constantFrom('{"amount":1,"amount":"1"}', '{"thirdPartyId":"a","thirdPartyId":{"$gt":""}}', '\ufeff{}', '{"a":1', '{"a":1}}', '', ' ', 'undefined', "{'a':1}"),
  fc.string({ unit: 'binary', maxLength: 200 }),
);

/** A body built on the operation's own property names, each with a wrong or odd value. */
function shapedBody(op: OperationSpec): fc.Arbitrary<string> {
  const props = Object.keys((op.requestBody?.schema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {});
  if (props.length === 0) return hostileJson;
  const odd = fc.oneof(
    fc.jsonValue(),
    fc.string({ unit: 'grapheme', maxLength: 50 }),
    fc.constantFrom('', ' ', '\u0000', '\u202e', '\ud83d', 'x'.repeat(100_000), -1, 0, 1e308, Number.MAX_SAFE_INTEGER + 2, 0.1 + 0.2, '1e-9', '-0', [], {}, null, true),
  );
  return fc
    .record(Object.fromEntries(props.map((p) => [p, odd])), { requiredKeys: [] })
    .chain((r) => fc.constantFrom(JSON.stringify(r), JSON.stringify({ ...r, __proto__: { polluted: true } }).replace('{', '{"__proto__":{"polluted":true},')));
}

const oddSegment: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom('..', '.', '%00', '__proto__', 'constructor', 'x'.repeat(5_000), '-1', '0', 'null', '00000000-0000-0000-0000-000000000000', '\u0000', '\u202e'),
);

function requestArb(op: OperationSpec): fc.Arbitrary<FuzzRequest> {
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const queryParams = op.parameters.filter((p) => p.in === 'query');
  return fc.record({
    pathValues: fc.tuple(...pathParams.map(() => oddSegment)),
    query: fc.subarray(queryParams).chain((qs) => fc.tuple(...qs.map((q) => oddSegment.map((v) => [q.name, v] as [string, string])))),
    body: op.requestBody ? fc.option(fc.oneof(hostileJson, shapedBody(op)), { nil: undefined, freq: 8 }) : fc.constant(undefined),
    contentType: fc.constantFrom('application/json', 'application/json', 'application/json', 'application/merge-patch+json', 'text/plain'),
  });
}

/** A digest of every row of every table: equal digests, unchanged store. */
function storeDigest(db: Database.Database): string {
  const hash = createHash('sha256');
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>;
  for (const { name } of tables) {
    hash.update(name);
    for (const row of db.prepare(`SELECT * FROM "${name}" ORDER BY rowid`).iterate()) hash.update(JSON.stringify(row));
  }
  return hash.digest('hex');
}

export async function fuzzEveryOperation(opts: FuzzOptions): Promise<FuzzResult> {
  const server: TestServer = await startTestServer({ env: { RATE_LIMIT_RPS: '0' } });
  const findings: FuzzFinding[] = [];
  const byStatus: Record<string, number> = {};
  let requests = 0;
  const db = new Database(path.join(server.dataDir, 'payments.db'), { readonly: true, fileMustExist: true });
  try {
    const tenant: TestTenant = await server.newTenant('Fuzz');
    for (const api of API_NAMES) {
      for (const op of loadOperations(api)) {
        const usesMember = op.security.some((s) => 'MemberToken' in s) && !op.security.some((s) => 'ApiKey' in s || 'ApiKeyAuth' in s);
        const headers: Record<string, string> = usesMember ? { authorization: `Bearer ${tenant.memberToken}` } : { 'x-api-key': tenant.apiKey, 'x-api-hash': tenant.apiHash };
        await fc.assert(
          fc.asyncProperty(requestArb(op), async (req) => {
            let i = 0;
            const p = op.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(req.pathValues[i++] ?? ''));
            const qs = new URLSearchParams(req.query).toString();
            const url = `${server.url}${p}${qs ? `?${qs}` : ''}`;
            const before = storeDigest(db);
            const res = await fetch(url, {
              method: op.method.toUpperCase(),
              headers: { ...headers, ...(req.body !== undefined ? { 'content-type': req.contentType } : {}) },
              ...(req.body !== undefined ? { body: req.body } : {}),
            });
            // An accepted event stream never ends: nothing of it is judged here but its status.
            const streams = res.ok && (res.headers.get('content-type') ?? '').startsWith('text/event-stream');
            const text = streams ? '' : await res.text();
            if (streams) await res.body?.cancel();
            requests++;
            byStatus[res.status] = (byStatus[res.status] ?? 0) + 1;
            const finding = (why: string): void => {
              findings.push({ operation: `${api}.${op.operationId}`, request: { method: op.method, url: url.slice(0, 300), body: req.body?.slice(0, 300) }, status: res.status, why, answer: text.slice(0, 300) });
              opts.log?.(`finding: ${api}.${op.operationId} ${res.status}: ${why}`);
            };
            if (res.status >= 500) finding('5xx answer');
            if (res.status >= 400) {
              let body: { type?: string; status?: number } | null = null;
              try {
                body = JSON.parse(text) as { type?: string; status?: number };
              } catch {
                finding('error body is not JSON');
              }
              if (res.headers.get('content-type') !== 'application/problem+json') finding(`content-type ${res.headers.get('content-type')}`);
              if (body) {
                if (!validateProblem(body)) finding(`not a valid Problem: ${JSON.stringify(validateProblem.errors).slice(0, 200)}`);
                const slug = body.type?.startsWith(PROBLEM_TYPE_BASE) ? body.type.slice(PROBLEM_TYPE_BASE.length) : null;
                const known = slug !== null ? problemTypes[slug as keyof typeof problemTypes] : undefined;
                if (!known) finding(`unknown problem type ${body.type}`);
                else if (known.status !== res.status || body.status !== res.status) finding(`status ${res.status} does not match ${slug} (${known.status})`);
              }
              if (storeDigest(db) !== before) finding('a refused request changed the store');
            }
            if (({} as Record<string, unknown>).polluted !== undefined) finding('Object.prototype was polluted');
            return true;
          }),
          { seed: opts.seed, numRuns: opts.runs, endOnFailure: true },
        );
        opts.log?.(`${api}.${op.operationId}: ${opts.runs} runs`);
      }
    }
  } finally {
    db.close();
    await server.close();
  }
  return { requests, byStatus, findings };
}
