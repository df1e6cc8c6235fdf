// The static coverage map (`payments-conformance coverage`): every rule of every target's
// catalogue (the contract's rules, with the seed documents' rules the targets quote) with the
// checks that claim it, or the written reason it has none. Read from prepared runs that never
// start: `prepare` builds a target's checks without contacting anything (PreparedRun.start).
import type { Check } from './check.ts';
import { CONTRACT_RULES } from './contract-rules.ts';
import type { CatalogueEntry } from './coverage.ts';
import type { OptionValues, TargetRegistry } from './target.ts';

const NOWHERE = 'http://127.0.0.1:9/';
const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

/** Options that make every check of a target (no check is left out for a missing option); nothing is sent to them. */
const STATIC_RUNS: Record<string, OptionValues[]> = {
  api: [
    {
      'base-url': NOWHERE,
      'api-key': 'k',
      'api-hash': 'h',
      'tenant-id': 't1',
      'member-token': 'm',
      'other-api-key': 'k2',
      'other-api-hash': 'h2',
      'other-tenant-id': 't2',
      'limited-api-key': 'k3',
      'limited-api-hash': 'h3',
      'refund-email': 'refunds@merchant.example',
      'webhook-url': 'https://merchant.example/webhooks',
    },
  ],
  sender: [{ 'base-url': NOWHERE, 'api-key': 'k', 'api-hash': 'h', 'tenant-id': 't1', 'member-token': 'm', 'callback-secret': SECRET, listen: '127.0.0.1:0' }],
  receiver: [
    { url: NOWHERE, secret: SECRET, 'previous-secret': SECRET },
    { url: NOWHERE, secret: SECRET, 'previous-secret': SECRET, scheme: 'standard-webhooks' },
  ],
};

export interface MappedRule {
  id: string;
  document: string;
  operation?: string;
  rule: string;
  /** `<target>: <check id>` of every check that claims it. */
  checks: string[];
  /** The written reasons (per target) it has no check, when no check claims it. */
  reasons: string[];
}

export interface TargetChecks {
  target: string;
  checks: Check[];
  catalogue: readonly CatalogueEntry[];
}

/** Every target's checks and catalogue, prepared and closed without a run. */
export async function preparedTargets(registry: TargetRegistry): Promise<TargetChecks[]> {
  const out: TargetChecks[] = [];
  for (const target of registry.list().filter((t) => t.implemented)) {
    for (const values of STATIC_RUNS[target.name] ?? []) {
      const prepared = await target.prepare({ ...values, quiet: true }, { seed: 1, quiet: true });
      try {
        out.push({ target: target.name, checks: prepared.checks, catalogue: prepared.catalogue ?? [] });
      } finally {
        await prepared.close?.();
      }
    }
  }
  return out;
}

/** The map: the contract's rules first (in document order), then the seed documents' rules of the catalogues. */
export function coverageMap(targets: readonly TargetChecks[]): MappedRule[] {
  const entries = new Map<string, MappedRule>();
  const add = (e: Pick<MappedRule, 'id' | 'document' | 'rule' | 'operation'>): MappedRule => {
    let m = entries.get(e.id);
    if (!m) {
      m = { id: e.id, document: e.document, rule: e.rule, ...(e.operation ? { operation: e.operation } : {}), checks: [], reasons: [] };
      entries.set(e.id, m);
    }
    return m;
  };
  for (const r of CONTRACT_RULES) add({ id: r.id, document: r.document, rule: r.rule, ...('operation' in r ? { operation: r.operation } : {}) });
  for (const t of targets) for (const e of t.catalogue) add(e);
  for (const t of targets) {
    for (const c of t.checks) {
      for (const id of new Set(c.rules.flatMap((r) => r.covers ?? []))) {
        const m = entries.get(id);
        const name = c.id;
        if (m && !m.checks.includes(name)) m.checks.push(name);
      }
    }
    for (const e of t.catalogue) {
      const m = entries.get(e.id);
      if (m && e.unobservable && !m.reasons.includes(`${t.target}: ${e.unobservable}`)) m.reasons.push(`${t.target}: ${e.unobservable}`);
    }
  }
  return [...entries.values()];
}

/** Rules no check claims and no target gives a reason for: what CI refuses. */
export function unaccounted(map: readonly MappedRule[]): string[] {
  return map.filter((m) => m.checks.length === 0 && m.reasons.length === 0).map((m) => m.id);
}

/** The map as text: a line per rule, grouped by document and operation. */
export function coverageMapLines(map: readonly MappedRule[]): string[] {
  const lines: string[] = [];
  const judged = map.filter((m) => m.checks.length > 0).length;
  lines.push(`${map.length} rules: ${judged} claimed by checks, ${map.length - judged} without a check (each with its reason)`);
  let heading = '';
  for (const m of map) {
    const h = `${m.document}${m.operation ? ` ${m.operation}` : ''}`;
    if (h !== heading) {
      lines.push('', h);
      heading = h;
    }
    if (m.checks.length > 0) lines.push(`  ${m.id}: ${m.checks.join(', ')}`);
    else lines.push(`  ${m.id}: no_check: ${m.reasons.join('; ') || 'NO REASON WRITTEN'}`);
  }
  return lines;
}
