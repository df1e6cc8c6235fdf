// Breaking-change check of spec/ against an earlier version of it (npm run spec:diff).
// OpenAPI documents are compared with api-smart-diff on their dereferenced bundles, so a change
// to a shared schema is reported in every operation that uses it. The AsyncAPI document is
// compared twice: its structure (servers, channels, operations, messages) with @asyncapi/diff
// and its standard, and each message's payload and headers with api-smart-diff, presented as
// the response of a synthetic operation: a receiver reads a webhook the way a client reads a
// response (a removed field breaks it, an added optional one does not). The Arazzo workflows of
// spec/workflows/ are part of the contract too: each is compared step by step (diffArazzo), a
// change reported under `workflow <workflowId>` as an operation's is under `POST /path`.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { diff as asyncApiDiff } from '@asyncapi/diff';
import { apiCompare } from 'api-smart-diff';
import { parse as parseYaml } from 'yaml';
import { loadAsyncApi } from './asyncapi.ts';
import { bundleOpenApi } from './redocly.ts';
import { ROOT } from './specs.ts';
import type { Change } from './spec-change.ts';
import { diffArazzo } from './spec-diff-arazzo.ts';
import { loadArazzo, workflowDocName, workflowFiles } from './workflows.ts';

const execFileAsync = promisify(execFile);

export type { Change } from './spec-change.ts';

export interface Acknowledgement {
  api: string;
  /** Exact `where` of the change; omitted: any. */
  where?: string;
  /** Pointer glob: `*` matches within one segment, `/**` zero or more segments; omitted: any. */
  pointer?: string;
  reason: string;
}

export interface DiffReport {
  changes: Change[];
  unacknowledged: Change[];
  acknowledged: Array<{ change: Change; by: Acknowledgement }>;
  unusedAcknowledgements: Acknowledgement[];
}

type Json = Record<string, unknown>;

const escapePointer = (s: string | number): string => String(s).replace(/~/g, '~0').replace(/\//g, '~1');
const pointerOf = (segments: ReadonlyArray<string | number>): string => segments.map((s) => `/${escapePointer(s)}`).join('');

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

// ---- Loading a version of spec/ ------------------------------------------------------------

/** Extracts `spec/` as it is at a git ref into a scratch folder; returns that folder. */
export async function specAtRef(ref: string, cwd: string = ROOT): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'spec-diff-'));
  try {
    await execFileAsync('git', ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { cwd });
  } catch {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`spec:diff: unknown git ref "${ref}"`);
  }
  const { stdout } = await execFileAsync('git', ['archive', '--format=tar', ref, 'spec'], { cwd, encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 });
  const tar = path.join(dir, 'spec.tar');
  await writeFile(tar, stdout);
  await execFileAsync('tar', ['-xf', tar, '-C', dir]);
  await rm(tar);
  return path.join(dir, 'spec');
}

/**
 * The version of spec/ a change is compared with: `given` when set; otherwise `main`; when the
 * checkout is on `main` itself (CI on the submitted main), the newest `spec-v*` tag reachable
 * from HEAD, else HEAD's first parent (the main before the last merge). Undefined: none.
 */
export async function resolveBase(repo: string, given: string | undefined): Promise<{ ref: string; why: string } | undefined> {
  const git = async (...args: string[]): Promise<string | undefined> => {
    try {
      return (await execFileAsync('git', args, { cwd: repo })).stdout.trim();
    } catch {
      return undefined;
    }
  };
  if (given !== undefined) return { ref: given, why: 'given with --base' };
  const branch = await git('rev-parse', '--abbrev-ref', 'HEAD');
  const head = await git('rev-parse', 'HEAD');
  const main = await git('rev-parse', '--verify', '--quiet', 'main^{commit}');
  const onMain = branch === 'main' || (branch === 'HEAD' && main === head);
  if (main !== undefined && !onMain) return { ref: 'main', why: 'the default' };
  const tag = await git('describe', '--tags', '--abbrev=0', '--match', 'spec-v*', 'HEAD');
  if (tag !== undefined && tag !== '') return { ref: tag, why: 'HEAD is main: the last contract release tag' };
  const parent = await git('rev-parse', '--verify', '--quiet', 'HEAD^1^{commit}');
  if (parent !== undefined) return { ref: 'HEAD^1', why: 'HEAD is main and no spec-v* tag: the first parent, main before the last merge' };
  return undefined;
}

interface SpecDocs {
  openapi: Map<string, Json>;
  asyncapi: Map<string, Json>;
  /** `workflows/<file name>` → the Arazzo document. */
  arazzo: Map<string, Json>;
}

/**
 * Every `<name>.openapi.yaml` (bundled, dereferenced) and `<name>.asyncapi.yaml` (resolved) of a
 * spec folder. The OpenAPI documents are bundled in this process, as generate.ts bundles them.
 */
export async function loadSpecDocs(dir: string): Promise<SpecDocs> {
  const specDir = path.resolve(dir);
  const files = (await readdir(specDir)).sort();
  const docs: SpecDocs = { openapi: new Map(), asyncapi: new Map(), arazzo: new Map() };
  for (const file of files) {
    const openapi = /^(.+)\.openapi\.ya?ml$/.exec(file);
    const asyncapi = /^(.+)\.asyncapi\.ya?ml$/.exec(file);
    if (openapi?.[1]) docs.openapi.set(openapi[1], await bundleOpenApi(path.join(specDir, file), true, `${path.join(specDir, file)} (spec:diff)`));
    else if (asyncapi?.[1]) docs.asyncapi.set(asyncapi[1], (await loadAsyncApi(path.join(specDir, file))) as Json);
  }
  for (const file of workflowFiles(path.join(specDir, 'workflows'))) docs.arazzo.set(workflowDocName(file), await loadArazzo(file));
  return docs;
}

// ---- OpenAPI -------------------------------------------------------------------------------

/** The bundle without its reusable components: dereferenced, every use already holds them. */
function withoutReusables(doc: Json): Json {
  const components = { ...((doc.components as Json | undefined) ?? {}) };
  for (const k of ['schemas', 'responses', 'parameters', 'requestBodies', 'headers', 'examples']) delete components[k];
  return { ...doc, components };
}

function describeLocation(segments: ReadonlyArray<string | number>): { where: string; pointer: string } {
  const [root, p, method, ...rest] = segments;
  if (root === 'paths' && typeof p === 'string' && typeof method === 'string' && HTTP_METHODS.has(method)) {
    return { where: `${method.toUpperCase()} ${p}`, pointer: pointerOf(rest) };
  }
  if (root === 'paths' && typeof p === 'string') return { where: `path ${p}`, pointer: pointerOf(segments.slice(2)) };
  return { where: 'document', pointer: pointerOf(segments) };
}

export function diffOpenApi(api: string, before: Json, after: Json): Change[] {
  const { diffs } = apiCompare(withoutReusables(before), withoutReusables(after));
  return diffs.map((d) => ({
    api,
    ...describeLocation(d.path),
    description: d.description ?? `${d.action} ${pointerOf(d.path)}`,
    breaking: d.type === 'breaking',
  }));
}

// ---- AsyncAPI ------------------------------------------------------------------------------

/**
 * Each message of each channel as the 200 response of `POST /<channel>/<message>`: its payload
 * the JSON body, its header schema's properties the response headers.
 */
function messagesAsResponses(doc: Json): Json {
  const paths: Json = {};
  for (const [channelName, channel] of Object.entries((doc.channels as Record<string, Json> | undefined) ?? {})) {
    for (const [messageName, message] of Object.entries((channel.messages as Record<string, Json> | undefined) ?? {})) {
      const headerSchema = (message.headers as Json | undefined) ?? {};
      const required = new Set((headerSchema.required as string[] | undefined) ?? []);
      const headers = Object.fromEntries(
        Object.entries((headerSchema.properties as Record<string, Json> | undefined) ?? {}).map(([name, schema]) => [name, { required: required.has(name), schema }]),
      );
      paths[`/${channelName}/${messageName}`] = {
        post: { responses: { '200': { description: 'the message', headers, content: { [(message.contentType as string | undefined) ?? 'application/json']: { schema: message.payload ?? {} } } } } },
      };
    }
  }
  return { openapi: '3.1.0', info: { title: 'messages', version: '0' }, paths };
}

function messageLocation(segments: ReadonlyArray<string | number>): { where: string; pointer: string } {
  const [, p, , , , ...rest] = segments; // paths, /<channel>/<message>, post, responses, 200, …
  const message = typeof p === 'string' ? p.split('/').pop() : undefined;
  if (message === undefined || segments[0] !== 'paths') return { where: 'document', pointer: pointerOf(segments) };
  const [part, a, b, ...tail] = rest;
  if (part === 'content' && b === 'schema') return { where: `message ${message}`, pointer: pointerOf(['payload', ...tail]) };
  if (part === 'content') return { where: `message ${message}`, pointer: pointerOf(['contentType', ...(a === undefined ? [] : [a])]) };
  if (part === 'headers' && a !== undefined) return { where: `message ${message}`, pointer: pointerOf(['headers', 'properties', a, ...(b === 'schema' ? tail : [b ?? '', ...tail])]) };
  return { where: `message ${message}`, pointer: pointerOf(rest) };
}

function structureLocation(pointer: string): { where: string; pointer: string } {
  const segments = pointer.split('/').slice(1);
  const [root, name, sub, messageName, ...rest] = segments;
  if (root === 'channels' && name !== undefined && sub === 'messages' && messageName !== undefined) {
    return { where: `message ${messageName.replace(/~1/g, '/').replace(/~0/g, '~')}`, pointer: rest.length === 0 ? '' : `/${rest.join('/')}` };
  }
  if ((root === 'operations' || root === 'channels' || root === 'servers') && name !== undefined) {
    return { where: `${root.slice(0, -1)} ${name.replace(/~1/g, '/').replace(/~0/g, '~')}`, pointer: segments.length > 2 ? `/${segments.slice(2).join('/')}` : '' };
  }
  return { where: 'document', pointer };
}

export function diffAsyncApi(api: string, before: Json, after: Json): Change[] {
  const changes: Change[] = [];
  const { diffs } = apiCompare(messagesAsResponses(before), messagesAsResponses(after));
  for (const d of diffs) {
    changes.push({ api, ...messageLocation(d.path), description: d.description ?? `${d.action}`, breaking: d.type === 'breaking' });
  }
  // Structure: payloads and headers are compared above, and an operation's dereferenced
  // channel and messages repeat what the channels section holds.
  const output = asyncApiDiff(before, after, {}).getOutput() as { changes: Array<{ action: string; path: string; type: string }> };
  for (const c of output.changes) {
    if (/\/(payload|headers)(\/|$)/.test(c.path) || /^\/operations\/[^/]+\/(channel|messages)\//.test(c.path)) continue;
    changes.push({ api, ...structureLocation(c.path), description: `[${c.action}] ${c.path}`, breaking: c.type === 'breaking' });
  }
  return changes;
}

// ---- Both versions of spec/ ----------------------------------------------------------------

export function diffDocs(before: SpecDocs, after: SpecDocs): Change[] {
  const changes: Change[] = [];
  for (const kind of ['openapi', 'asyncapi'] as const) {
    for (const [api, old] of before[kind]) {
      const current = after[kind].get(api);
      if (current === undefined) {
        changes.push({ api, where: 'document', pointer: '', description: `[Removed] the ${kind === 'openapi' ? 'OpenAPI' : 'AsyncAPI'} document`, breaking: true });
        continue;
      }
      changes.push(...(kind === 'openapi' ? diffOpenApi(api, old, current) : diffAsyncApi(api, old, current)));
    }
    for (const api of after[kind].keys()) {
      if (!before[kind].has(api)) changes.push({ api, where: 'document', pointer: '', description: `[Added] a new ${kind} document`, breaking: false });
    }
  }
  // A workflow file removed or added is its workflows removed or added.
  for (const api of new Set([...before.arazzo.keys(), ...after.arazzo.keys()])) {
    changes.push(...diffArazzo(api, before.arazzo.get(api), after.arazzo.get(api)));
  }
  return changes;
}

// ---- Acknowledgements ----------------------------------------------------------------------

function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i += 1) {
    const c = glob[i] ?? '';
    if (c === '/' && glob.startsWith('/**', i)) {
      // `/**` is zero or more whole segments.
      re += '(?:/.*)?';
      i += 2;
    } else if (c === '*' && glob[i + 1] === '*') {
      re += '.*';
      i += 1;
    } else if (c === '*') re += '[^/]*';
    else re += c.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

export function matches(ack: Acknowledgement, change: Change): boolean {
  if (ack.api !== change.api) return false;
  if (ack.where !== undefined && ack.where !== change.where) return false;
  if (ack.pointer !== undefined && !globToRegExp(ack.pointer).test(change.pointer)) return false;
  return true;
}

/** Reads spec/breaking-changes.yaml (`accepted:` entries); a missing file accepts nothing. */
export async function readAcknowledgements(file: string): Promise<Acknowledgement[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return [];
  }
  const doc = (parseYaml(text) ?? {}) as { accepted?: unknown };
  const list = doc.accepted ?? [];
  if (!Array.isArray(list)) throw new Error(`${file}: "accepted" must be a list`);
  return list.map((entry: unknown, i) => {
    const e = (entry ?? {}) as Record<string, unknown>;
    const where = `${path.basename(file)}: accepted[${i}]`;
    if (typeof e.api !== 'string' || e.api === '') throw new Error(`${where}: "api" (the document's name) is required`);
    if (typeof e.reason !== 'string' || e.reason.trim() === '') throw new Error(`${where}: "reason" is required`);
    if (e.where === undefined && e.pointer === undefined) throw new Error(`${where}: give "where", "pointer" or both`);
    for (const k of ['where', 'pointer'] as const) if (e[k] !== undefined && typeof e[k] !== 'string') throw new Error(`${where}: "${k}" must be a string`);
    return { api: e.api, reason: e.reason, ...(e.where === undefined ? {} : { where: e.where as string }), ...(e.pointer === undefined ? {} : { pointer: e.pointer as string }) };
  });
}

export function classify(changes: Change[], acks: Acknowledgement[]): DiffReport {
  const used = new Set<Acknowledgement>();
  const acknowledged: DiffReport['acknowledged'] = [];
  const unacknowledged: Change[] = [];
  for (const change of changes.filter((c) => c.breaking)) {
    const by = acks.find((a) => matches(a, change));
    if (by === undefined) unacknowledged.push(change);
    else {
      used.add(by);
      acknowledged.push({ change, by });
    }
  }
  return { changes, unacknowledged, acknowledged, unusedAcknowledgements: acks.filter((a) => !used.has(a)) };
}

/** Compares two spec folders and applies the acknowledgements of the newer one. */
export async function compareSpecDirs(baseDir: string, headDir: string, acknowledgementsFile = path.join(headDir, 'breaking-changes.yaml')): Promise<DiffReport> {
  const [before, after] = [await loadSpecDocs(baseDir), await loadSpecDocs(headDir)];
  return classify(diffDocs(before, after), await readAcknowledgements(acknowledgementsFile));
}
