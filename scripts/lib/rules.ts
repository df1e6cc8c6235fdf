// The rules of the contract, with stable ids (spec/README.md, "Rules"): what an implementation
// can be judged on. Two kinds:
//   written   an `x-rules` list beside the text that states them, on a document's `info`
//             (ids `<document>#<slug>`) or on an operation (ids `<operationId>#<slug>`);
//   derived   every documented status of every operation (`<operationId>#status-<code>`),
//             every problem type its answers document by example (`<operationId>#problem-<slug>`),
//             and, for every operation that takes an id (a path parameter) or a search (a
//             required query parameter, or `x-required-one-of`), `<operationId>#isolation`: the
//             products' "nothing of one tenant environment is visible to another" on that
//             operation. Never written by hand.
// `npm run generate` writes them to generated/rules.ts (the conformance suite's coverage map and
// the type of the ids its checks name); `npm run lint:spec` refuses malformed or repeated ids.

export type RuleKind = 'written' | 'status' | 'problem' | 'isolation';

export interface ContractRule {
  id: string;
  /** The document's name: transactions, orders, management, sandbox, webhooks. */
  document: string;
  /** The operation the rule applies to; absent for a document-wide rule. */
  operation?: string;
  kind: RuleKind;
  /** The sentence (or a short quote of it) that states the rule. */
  rule: string;
}

/** `<prefix>#<slug>`: the prefix a document name or an operationId, the slug lowercase words joined by `-`. */
export const RULE_ID = /^[a-z][A-Za-z0-9]*#[a-z0-9]+(?:-[a-z0-9]+)*$/;

const PROBLEM_BASE = 'https://errors.payments.example/';
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

type Obj = Record<string, unknown>;
const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});

/** The `x-rules` list at `where`, each entry checked: problems are collected, not thrown. */
function xRules(node: Obj, prefix: string, document: string, operation: string | undefined, where: string, problems: string[]): ContractRule[] {
  const list = node['x-rules'];
  if (list === undefined) return [];
  if (!Array.isArray(list)) {
    problems.push(`${where}: x-rules must be a list of {id, rule}`);
    return [];
  }
  const rules: ContractRule[] = [];
  for (const [i, item] of list.entries()) {
    const e = asObj(item);
    const extra = Object.keys(e).filter((k) => k !== 'id' && k !== 'rule');
    if (typeof e.id !== 'string' || typeof e.rule !== 'string' || e.rule.trim() === '' || extra.length > 0) {
      problems.push(`${where}: x-rules[${i}] must be {id, rule} with two non-empty strings${extra.length > 0 ? ` (unknown: ${extra.join(', ')})` : ''}`);
      continue;
    }
    if (!RULE_ID.test(e.id) || !e.id.startsWith(`${prefix}#`)) {
      problems.push(`${where}: x-rules id "${e.id}" must be ${prefix}#<slug> (lowercase words joined by -)`);
      continue;
    }
    if (/#(status-|problem-|isolation$)/.test(e.id)) {
      problems.push(`${where}: x-rules id "${e.id}" takes a slug reserved for the derived rules`);
      continue;
    }
    rules.push({ id: e.id, document, ...(operation ? { operation } : {}), kind: 'written', rule: e.rule.trim().replace(/\s+/g, ' ') });
  }
  return rules;
}

/** The problem type slugs an answer documents by example. */
function problemSlugs(response: Obj): string[] {
  const media = asObj(asObj(response.content)['application/problem+json']);
  const values = [media.example, ...Object.values(asObj(media.examples)).map((x) => asObj(x).value)];
  const slugs = values.map((v) => asObj(v).type).filter((t): t is string => typeof t === 'string' && t.startsWith(PROBLEM_BASE));
  return slugs.map((t) => t.slice(PROBLEM_BASE.length));
}

function firstSentence(text: unknown): string {
  const s = typeof text === 'string' ? text.trim().replace(/\s+/g, ' ') : '';
  return (/^.*?\.(?=\s|$)/.exec(s)?.[0] ?? s).slice(0, 200);
}

/** Whether the operation takes an id (a path parameter) or a search (a required query parameter, or x-required-one-of). */
function takesIdOrSearch(op: Obj, shared: unknown): boolean {
  const params = [...(Array.isArray(shared) ? shared : []), ...(Array.isArray(op.parameters) ? op.parameters : [])].map(asObj);
  return params.some((p) => p.in === 'path' || (p.in === 'query' && p.required === true)) || op['x-required-one-of'] !== undefined;
}

/** The derived rules of one operation: each documented status, each documented problem type, its isolation. */
function derivedRules(document: string, operationId: string, method: string, path: string, op: Obj, shared: unknown, titles: Readonly<Record<string, string>>): ContractRule[] {
  const responses = asObj(op.responses);
  const rules: ContractRule[] = [];
  if (takesIdOrSearch(op, shared)) {
    rules.push({ id: `${operationId}#isolation`, document, operation: operationId, kind: 'isolation', rule: `${method.toUpperCase()} ${path}: an id or search value of another tenant environment is answered as an unknown one (nothing of one tenant environment is visible to another)` });
  }
  const problems = new Map<string, string[]>();
  for (const [code, r] of Object.entries(responses)) {
    const res = asObj(r);
    rules.push({ id: `${operationId}#status-${code.toLowerCase()}`, document, operation: operationId, kind: 'status', rule: `${method.toUpperCase()} ${path} answers ${code}: ${firstSentence(res.description)}` });
    for (const slug of problemSlugs(res)) problems.set(slug, [...(problems.get(slug) ?? []), code]);
  }
  for (const [slug, codes] of problems) {
    const title = titles[slug] ?? slug;
    rules.push({ id: `${operationId}#problem-${slug}`, document, operation: operationId, kind: 'problem', rule: `${method.toUpperCase()} ${path} answers ${[...new Set(codes)].join(' or ')} ${slug} (${title}) as application/problem+json whose status is the HTTP status` });
  }
  return rules;
}

export interface RuleSet {
  rules: ContractRule[];
  /** Malformed entries and repeated ids: lint:spec fails on any. */
  problems: string[];
}

/**
 * Every rule of the resolved OpenAPI documents (by name) and of the resolved AsyncAPI document
 * (`webhooks`, its `info` and operations), in document order; `titles` are the problem types' titles.
 */
export function contractRules(openapi: ReadonlyMap<string, Obj>, asyncapi: Obj | undefined, titles: Readonly<Record<string, string>>): RuleSet {
  const problems: string[] = [];
  const rules: ContractRule[] = [];
  for (const [document, doc] of openapi) {
    rules.push(...xRules(asObj(doc.info), document, document, undefined, `${document}: info`, problems));
    for (const [path, item] of Object.entries(asObj(doc.paths))) {
      for (const method of METHODS) {
        const op = asObj(asObj(item)[method]);
        const operationId = op.operationId;
        if (typeof operationId !== 'string') continue;
        rules.push(...xRules(op, operationId, document, operationId, `${document}: ${method.toUpperCase()} ${path}`, problems));
        rules.push(...derivedRules(document, operationId, method, path, op, asObj(item).parameters, titles));
      }
    }
  }
  if (asyncapi) {
    rules.push(...xRules(asObj(asyncapi.info), 'webhooks', 'webhooks', undefined, 'webhooks: info', problems));
    for (const [key, op] of Object.entries(asObj(asyncapi.operations))) rules.push(...xRules(asObj(op), key, 'webhooks', key, `webhooks: operation ${key}`, problems));
  }
  const seen = new Set<string>();
  for (const r of rules) {
    if (seen.has(r.id)) problems.push(`rule id ${r.id} is used twice`);
    seen.add(r.id);
  }
  return { rules, problems };
}

/** generated/rules.ts: the rules as data and the union type of their ids. */
export function rulesModule(header: string, rules: readonly ContractRule[]): string {
  const rows = rules.map((r) => `  ${JSON.stringify(r)},`).join('\n');
  return (
    header +
    `\n/** Every rule of the contract: \`written\` ones from the documents' \`x-rules\`, \`status\`, \`problem\` and \`isolation\` ones derived from each operation. */\n` +
    `export const CONTRACT_RULES = [\n${rows}\n] as const satisfies readonly ContractRule[];\n\n` +
    `export interface ContractRule {\n  readonly id: string;\n  readonly document: string;\n  readonly operation?: string;\n  readonly kind: 'written' | 'status' | 'problem' | 'isolation';\n  readonly rule: string;\n}\n\n` +
    `/** The id of a rule of the contract: what a conformance check's \`covers\` names. */\n` +
    `export type ContractRuleId = (typeof CONTRACT_RULES)[number]['id'];\n`
  );
}
