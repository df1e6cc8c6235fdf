import { describe, expect, it } from 'vitest';
import type { CheckResult, RunReport } from './check.ts';
import { runPassed, summarize } from './check.ts';
import { summaryTable } from './format.ts';
import { JSON_REPORT_FORMAT, toJsonReport, toJsonText } from './json.ts';
import { toJUnitXml } from './junit.ts';

// ---- a small strict XML reader, enough to prove the JUnit output is well-formed ----------

interface XmlNode {
  name: string;
  attrs: Record<string, string>;
  children: XmlNode[];
  text: string;
}

const ENTITY = /&(amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);/g;
const BARE_AMPERSAND = /&(?!(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);)/;
const NOT_XML_CHAR = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

function decode(s: string): string {
  return s.replace(ENTITY, (_m, e: string) => {
    if (e === 'amp') return '&';
    if (e === 'lt') return '<';
    if (e === 'gt') return '>';
    if (e === 'quot') return '"';
    if (e === 'apos') return "'";
    return String.fromCodePoint(e.startsWith('#x') ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
  });
}

function parseXml(xml: string): XmlNode {
  if (NOT_XML_CHAR.test(xml)) throw new Error('a character XML 1.0 cannot carry');
  const decl = /^<\?xml version="1\.0" encoding="UTF-8"\?>\n/.exec(xml);
  if (!decl) throw new Error('no XML declaration');
  const token = /<\/([A-Za-z_][\w.-]*)>|<([A-Za-z_][\w.-]*)((?:\s+[A-Za-z_][\w.-]*="[^"<]*")*)\s*(\/?)>|([^<]+)/y;
  token.lastIndex = decl[0].length;
  const root: XmlNode = { name: '#document', attrs: {}, children: [], text: '' };
  const stack: XmlNode[] = [root];
  while (token.lastIndex < xml.length) {
    const at = token.lastIndex;
    const m = token.exec(xml);
    if (!m) throw new Error(`not well-formed at offset ${at}: ${JSON.stringify(xml.slice(at, at + 40))}`);
    const top = stack[stack.length - 1]!;
    if (m[1] !== undefined) {
      if (top.name !== m[1]) throw new Error(`</${m[1]}> closes <${top.name}>`);
      stack.pop();
    } else if (m[2] !== undefined) {
      const attrs: Record<string, string> = {};
      for (const a of (m[3] ?? '').matchAll(/([A-Za-z_][\w.-]*)="([^"<]*)"/g)) {
        if (BARE_AMPERSAND.test(a[2]!)) throw new Error(`bare & in attribute ${a[1]}`);
        if (a[1]! in attrs) throw new Error(`duplicate attribute ${a[1]}`);
        attrs[a[1]!] = decode(a[2]!);
      }
      const node: XmlNode = { name: m[2], attrs, children: [], text: '' };
      top.children.push(node);
      if (m[4] !== '/') stack.push(node);
    } else {
      const text = m[5]!;
      if (BARE_AMPERSAND.test(text)) throw new Error('bare & in text');
      if (text.includes('>') ) throw new Error('unescaped > in text');
      if (stack.length === 1 && text.trim() !== '') throw new Error('text outside the root element');
      top.text += decode(text);
    }
  }
  if (stack.length !== 1) throw new Error(`<${stack[stack.length - 1]!.name}> is not closed`);
  if (root.children.length !== 1) throw new Error('not exactly one root element');
  return root.children[0]!;
}

// ---- fixtures --------------------------------------------------------------------------

const NASTY = `answered 200 <ok> & "done" 'quoted'\u0001\u0007 tab\there\nnext line \uD800 lone surrogate, ünïcödé ✓ 𝄞`;

function result(over: Partial<CheckResult> & Pick<CheckResult, 'id' | 'group' | 'status'>): CheckResult {
  return { title: `title of ${over.id}`, target: 'receiver', rules: [{ source: 'webhooks.asyncapi.yaml#/components/messages/orderPaid' }], durationMs: 12, notes: [], ...over };
}

const results: CheckResult[] = [
  result({ id: 'receiver.accepts.order.paid.orderPaidExact', group: 'order.paid', status: 'passed' }),
  result({
    id: 'receiver.duplicate.order.paid',
    group: 'order.paid',
    status: 'failed',
    notes: ['a note with <markup> & ampersands'],
    failure: {
      message: NASTY,
      rule: { source: 'payments-service-interface.md § Delivery rules, rule 3', quote: 'The receiver must handle duplicates by event id.' },
      exchanges: [
        {
          label: 'second attempt',
          request: {
            method: 'POST',
            url: 'http://127.0.0.1:9999/webhooks?a=1&b=2',
            headers: { 'Content-Type': 'application/json', 'Service-Signature': 't=1795336283,v1=' + 'a'.repeat(64) },
            body: '{"merchantReference":"</failure>]]>&amp;"}',
            bodyBytes: 42,
            bodyTruncated: false,
          },
          response: { status: 500, headers: { 'content-type': 'text/html' }, body: '<html>boom & \u0000 crash</html>', bodyTruncated: false, durationMs: 3 },
        },
      ],
    },
  }),
  result({ id: 'receiver.rotation.orderWebhooks', group: 'rotation', status: 'skipped', reason: 'no previous secret was given for orderWebhooks' }),
  result({ id: 'api.orders.create', group: 'createOrder', status: 'not_implemented', reason: 'not implemented yet' }),
];

const report: RunReport = {
  tool: 'payments-conformance',
  target: 'receiver',
  seed: 4242,
  startedAt: '2026-11-22T08:00:00.000Z',
  finishedAt: '2026-11-22T08:00:01.500Z',
  durationMs: 1500,
  notes: ['orderWebhooks → POST http://127.0.0.1:9999/webhooks?a=1&b=2'],
  results,
};

// ---- JUnit -------------------------------------------------------------------------------

describe('the XML reader used here', () => {
  it('rejects what is not well-formed', () => {
    const head = '<?xml version="1.0" encoding="UTF-8"?>\n';
    expect(() => parseXml(`${head}<a>x & y</a>`)).toThrow(/bare &/);
    expect(() => parseXml(`${head}<a><b></a>`)).toThrow(/closes/);
    expect(() => parseXml(`${head}<a b="1" b="2"/>`)).toThrow(/duplicate/);
    expect(() => parseXml(`${head}<a>\u0001</a>`)).toThrow(/cannot carry/);
    expect(() => parseXml(`${head}<a b="<"/>`)).toThrow(/not well-formed/);
    expect(parseXml(`${head}<a b="&amp;&#10;">&lt;ok&gt;</a>`)).toMatchObject({ attrs: { b: '&\n' }, text: '<ok>' });
  });
});

describe('JUnit reporter', () => {
  const xml = toJUnitXml(report);
  const root = parseXml(xml);

  it('writes well-formed XML with one testsuite per group', () => {
    expect(root.name).toBe('testsuites');
    expect(root.attrs).toMatchObject({ tests: '4', failures: '1', errors: '0', skipped: '2', time: '1.500' });
    expect(root.children.map((s) => s.attrs.name)).toEqual(['receiver: order.paid', 'receiver: rotation', 'receiver: createOrder']);
    const [paid, rotation, create] = root.children;
    expect(paid!.attrs).toMatchObject({ tests: '2', failures: '1', skipped: '0' });
    expect(rotation!.attrs).toMatchObject({ tests: '1', failures: '0', skipped: '1' });
    expect(create!.attrs).toMatchObject({ tests: '1', skipped: '1' });
  });

  it('records the seed as a property of every suite', () => {
    for (const suite of root.children) {
      const props = suite.children.find((c) => c.name === 'properties')!.children;
      expect(props.find((p) => p.attrs.name === 'seed')?.attrs.value).toBe('4242');
      expect(props.find((p) => p.attrs.name === 'note')?.attrs.value).toBe('orderWebhooks → POST http://127.0.0.1:9999/webhooks?a=1&b=2');
    }
  });

  it('gives a failed check a <failure> with the escaped message, the rule and the evidence', () => {
    const cases = root.children[0]!.children.filter((c) => c.name === 'testcase');
    expect(cases.map((c) => c.attrs.name)).toEqual([
      'receiver.accepts.order.paid.orderPaidExact: title of receiver.accepts.order.paid.orderPaidExact',
      'receiver.duplicate.order.paid: title of receiver.duplicate.order.paid',
    ]);
    expect(cases[0]!.children.map((c) => c.name)).toEqual(['system-out']);
    const failure = cases[1]!.children.find((c) => c.name === 'failure')!;
    expect(cases[1]!.attrs.classname).toBe('receiver.order.paid');
    expect(cases[1]!.attrs.time).toBe('0.012');
    // Markup, quotes and line breaks survive; characters XML cannot carry become visible escapes.
    expect(failure.attrs.message).toBe(
      `answered 200 <ok> & "done" 'quoted'\\u0001\\u0007 tab\there\nnext line \\ud800 lone surrogate, ünïcödé ✓ 𝄞`,
    );
    expect(failure.attrs.type).toBe('payments-service-interface.md § Delivery rules, rule 3');
    expect(failure.text).toContain('"The receiver must handle duplicates by event id."');
    expect(failure.text).toContain('sent (second attempt): POST http://127.0.0.1:9999/webhooks?a=1&b=2');
    expect(failure.text).toContain('{"merchantReference":"</failure>]]>&amp;"}');
    expect(failure.text).toContain('got:   500 in 3 ms');
    expect(failure.text).toContain('<html>boom & \\u0000 crash</html>');
    const out = cases[1]!.children.find((c) => c.name === 'system-out')!;
    expect(out.text).toContain('note: a note with <markup> & ampersands');
  });

  it('marks skipped and not implemented checks as <skipped> with their reason', () => {
    const skipped = root.children[1]!.children.find((c) => c.name === 'testcase')!.children.find((c) => c.name === 'skipped')!;
    expect(skipped.attrs.message).toBe('no previous secret was given for orderWebhooks');
    const todo = root.children[2]!.children.find((c) => c.name === 'testcase')!.children.find((c) => c.name === 'skipped')!;
    expect(todo.attrs.message).toBe('not implemented: not implemented yet');
  });

  it('writes an empty run as an empty, valid testsuites element', () => {
    const empty = parseXml(toJUnitXml({ ...report, results: [] }));
    expect(empty.attrs).toMatchObject({ tests: '0', failures: '0' });
    expect(empty.children).toEqual([]);
  });
});

// ---- JSON --------------------------------------------------------------------------------

describe('JSON reporter', () => {
  it('writes a versioned report with the seed, the totals, the groups and every check', () => {
    const parsed = JSON.parse(toJsonText(report)) as ReturnType<typeof toJsonReport>;
    expect(parsed.format).toBe(JSON_REPORT_FORMAT);
    expect(parsed.seed).toBe(4242);
    expect(parsed.repeat).toContain('--seed 4242');
    expect(parsed.passed).toBe(false);
    expect(parsed.totals).toEqual({ passed: 1, failed: 1, skipped: 1, not_implemented: 1, total: 4, durationMs: 48 });
    expect(parsed.groups.map((g) => [g.group, g.total])).toEqual([
      ['order.paid', 2],
      ['rotation', 1],
      ['createOrder', 1],
    ]);
    expect(parsed.checks).toHaveLength(4);
    // Unescaped, exactly as recorded (JSON carries any string).
    expect(parsed.checks[1]!.failure!.message).toBe(NASTY);
    expect(parsed.checks[1]!.failure!.exchanges[0]!.response.status).toBe(500);
  });

  it('passes a run in which nothing failed', () => {
    const ok = { ...report, results: results.filter((r) => r.status !== 'failed') };
    expect(toJsonReport(ok).passed).toBe(true);
    expect(runPassed(ok)).toBe(true);
  });
});

// ---- summary -----------------------------------------------------------------------------

describe('summary table', () => {
  it('has one row per group in order of appearance, and the totals', () => {
    expect(summarize(results).map((g) => g.group)).toEqual(['order.paid', 'rotation', 'createOrder']);
    const lines = summaryTable(results).split('\n');
    expect(lines[0]).toMatch(/^group\s+passed\s+failed\s+skipped\s+not impl\.\s+total$/);
    expect(lines.find((l) => l.startsWith('order.paid'))).toMatch(/order\.paid\s+1\s+1\s+0\s+0\s+2$/);
    expect(lines[lines.length - 1]).toMatch(/^total\s+1\s+1\s+1\s+1\s+4$/);
  });
});
