// spec:diff of the Arazzo workflows (spec/workflows/): the flows are part of the published
// contract, run by partners against their implementations and read as how to use the API. A
// change is reported per workflow (`workflow <workflowId>`), with a pointer inside it whose steps
// are named by stepId and its success criteria by their condition
// (`/steps/createPayout/successCriteria/$statusCode == 201`), and is breaking when
//   - an implementation that passed the workflow may now fail it: a step or a success criterion
//     added, a request (operation, parameters, body), the steps' order or a control flow
//     (actions) changed, a required input added;
//   - something a user of the workflow refers to is gone: the workflow, a step, an output, an
//     input's type.
// Not breaking: a workflow, an output or an optional input added, a success criterion removed
// (the flow asks less), a required input made optional, and every summary, description and title.
import type { Change } from './spec-change.ts';

type Json = Record<string, unknown>;
type Segment = string | number;
type Action = 'Added' | 'Removed' | 'Changed';

interface Leaf {
  path: Segment[];
  action: Action;
  before?: unknown;
  after?: unknown;
}

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const escape = (s: Segment): string => String(s).replace(/~/g, '~0').replace(/\//g, '~1');
const pointerOf = (segments: readonly Segment[]): string => segments.map((s) => `/${escape(s)}`).join('');
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** How an array is matched item by item: steps by stepId, parameters by place and name, criteria as a set. */
function keyOf(parent: Segment | undefined, item: unknown, index: number): string {
  if (isObject(item)) {
    if (parent === 'steps' && typeof item.stepId === 'string') return item.stepId;
    if (parent === 'workflows' && typeof item.workflowId === 'string') return item.workflowId;
    if (parent === 'parameters' && typeof item.name === 'string') return `${String(item.in ?? '')}:${item.name}`;
    if (parent === 'sourceDescriptions' && typeof item.name === 'string') return item.name;
    if ((parent === 'onSuccess' || parent === 'onFailure') && typeof item.name === 'string') return item.name;
  }
  if (parent === 'successCriteria' || parent === 'criteria' || parent === 'required') return JSON.stringify(item);
  return String(index);
}

function diffValues(before: unknown, after: unknown, at: Segment[], out: Leaf[]): void {
  if (same(before, after)) return;
  if (Array.isArray(before) && Array.isArray(after)) {
    const parent = at.at(-1);
    const keyed = (list: unknown[]): Map<string, unknown> => new Map(list.map((item, i) => [keyOf(parent, item, i), item]));
    const [a, b] = [keyed(before), keyed(after)];
    const label = (key: string, item: unknown): Segment => (parent === 'successCriteria' || parent === 'criteria' || parent === 'required' ? (isObject(item) && typeof item.condition === 'string' ? item.condition : String(item)) : key);
    for (const [key, item] of a) {
      if (!b.has(key)) out.push({ path: [...at, label(key, item)], action: 'Removed', before: item });
      else diffValues(item, b.get(key), [...at, label(key, item)], out);
    }
    for (const [key, item] of b) if (!a.has(key)) out.push({ path: [...at, label(key, item)], action: 'Added', after: item });
    return;
  }
  if (isObject(before) && isObject(after)) {
    for (const key of Object.keys(before)) {
      if (!(key in after)) out.push({ path: [...at, key], action: 'Removed', before: before[key] });
      else diffValues(before[key], after[key], [...at, key], out);
    }
    for (const key of Object.keys(after)) if (!(key in before)) out.push({ path: [...at, key], action: 'Added', after: after[key] });
    return;
  }
  out.push({ path: at, action: 'Changed', before, after });
}

const ANNOTATIONS = new Set(['summary', 'description', 'title']);

/** Breaking or not, for a change inside one workflow (path relative to the workflow). */
function isBreaking(path: readonly Segment[], action: Action): boolean {
  const last = path.at(-1);
  if (typeof last === 'string' && ANNOTATIONS.has(last)) return false;
  const [first, second, third] = path;
  if (first === 'steps' && path.length === 2) return true; // a step added or removed
  if (first === 'steps' && third === 'successCriteria' && path.length === 4) return action !== 'Removed';
  if ((first === 'outputs' && path.length === 2) || (first === 'steps' && third === 'outputs' && path.length === 4)) return action !== 'Added';
  if (first === 'inputs') {
    if (second === 'required' && path.length === 3) return action === 'Added';
    if (second === 'properties' && path.length === 3) return action === 'Removed' ? false : action === 'Changed';
    if (second === 'properties') return !['default', 'example', 'examples'].includes(String(last));
  }
  return true;
}

/** What changed, in words; spec:diff prints the pointer beside it. */
function describe(leaf: Leaf): string {
  const show = (v: unknown): string => {
    const text = typeof v === 'string' ? v : JSON.stringify(v);
    return text.length > 80 ? `${text.slice(0, 77)}...` : text;
  };
  if (leaf.action === 'Changed') return `[Changed] ${show(leaf.before)} → ${show(leaf.after)}`;
  const [first, , third] = leaf.path;
  const what =
    first === 'steps' && leaf.path.length === 2 ? 'a step'
    : third === 'successCriteria' && leaf.path.length === 4 ? 'a success criterion'
    : (first === 'outputs' && leaf.path.length === 2) || (third === 'outputs' && leaf.path.length === 4) ? 'an output'
    : first === 'inputs' && leaf.path[1] === 'required' ? 'a required input'
    : 'a value';
  return `[${leaf.action}] ${what}: ${show(leaf.action === 'Added' ? leaf.after : leaf.before)}`;
}

/** The changes between two versions of one workflow file (either may be missing: added or removed). */
export function diffArazzo(api: string, before: Json | undefined, after: Json | undefined): Change[] {
  const workflows = (doc: Json | undefined): Map<string, Json> =>
    new Map((((doc?.workflows as Json[] | undefined) ?? []).filter(isObject)).map((w) => [String(w.workflowId), w]));
  const [a, b] = [workflows(before), workflows(after)];
  const changes: Change[] = [];
  for (const [id, workflow] of a) {
    const where = `workflow ${id}`;
    const next = b.get(id);
    if (next === undefined) {
      changes.push({ api, where, pointer: '', description: '[Removed] the workflow', breaking: true });
      continue;
    }
    const leaves: Leaf[] = [];
    // Steps run in their order: the same steps in another order are another flow.
    const order = (w: Json): string[] => ((w.steps as Json[] | undefined) ?? []).map((step) => String(step.stepId));
    const [was, is] = [order(workflow), order(next)];
    const kept = (list: string[], other: string[]): string[] => list.filter((id) => other.includes(id));
    if (!same(kept(was, is), kept(is, was))) leaves.push({ path: ['steps'], action: 'Changed', before: kept(was, is).join(', '), after: kept(is, was).join(', ') });
    diffValues(workflow, next, [], leaves);
    for (const leaf of leaves) {
      const pointer = pointerOf(leaf.path);
      changes.push({ api, where, pointer, description: describe(leaf), breaking: isBreaking(leaf.path, leaf.action) });
    }
  }
  for (const id of b.keys()) if (!a.has(id)) changes.push({ api, where: `workflow ${id}`, pointer: '', description: '[Added] a new workflow', breaking: false });
  // Outside the workflows: the documents they run against (a changed source is a changed flow).
  const leaves: Leaf[] = [];
  diffValues(before?.sourceDescriptions ?? [], after?.sourceDescriptions ?? [], ['sourceDescriptions'], leaves);
  diffValues(before?.components ?? {}, after?.components ?? {}, ['components'], leaves);
  if (before !== undefined && after !== undefined) {
    for (const leaf of leaves) {
      const pointer = pointerOf(leaf.path);
      changes.push({ api, where: 'document', pointer, description: describe(leaf), breaking: !ANNOTATIONS.has(String(leaf.path.at(-1))) });
    }
  }
  return changes;
}
