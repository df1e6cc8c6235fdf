// The webhooks page's worked example and the landing page, without a browser: the example
// reproduces with an HMAC computed independently of signing/, and sits where the reader needs it.
import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { DOCUMENTS } from '../docs.ts';
import { landingPage, purposeHtml, readDocumentInfo } from './docs-index.ts';
import { webhooksWithWorkedExample } from './docs-webhooks.ts';
import { ASYNCAPI_DOC, OPENAPI_DOCS } from './specs.ts';

describe('the worked signature example', () => {
  it('names a secret, t, body and v1 that an independent HMAC-SHA256 reproduces, before the delivery rules', async () => {
    const spec = parseYaml(await readFile(ASYNCAPI_DOC, 'utf8')) as Record<string, unknown>;
    const withExample = await webhooksWithWorkedExample(spec, ASYNCAPI_DOC);
    const description = (withExample.info as { description: string }).description;
    const section = description.slice(description.indexOf('### Worked example'), description.indexOf('### Delivery'));
    expect(section.length).toBeGreaterThan(200);
    const secret = /Secret: `(whsec_[A-Za-z0-9_-]+)`/.exec(section)?.[1] ?? '';
    const t = /header: `([0-9]+)`/.exec(section)?.[1] ?? '';
    const body = /```json\n(.*)\n```/.exec(section)?.[1] ?? '';
    const v1 = /Expected `v1`[^`]*`([0-9a-f]{64})`/.exec(section)?.[1] ?? '';
    expect(createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${t}.${body}`, 'utf8').digest('hex')).toBe(v1);
    expect(JSON.parse(body)).toMatchObject({ type: 'order.payment_review_required' });
    expect(section).toContain(`printf '%s' '${t}.${body}' | openssl dgst -sha256 -hmac '${secret}'`);
    // The rest of the description is untouched.
    expect(description.replace(section, '')).toBe((spec.info as { description: string }).description);
  });
});

describe('the landing page', () => {
  it('shows every document with its title, version and the first part of its description', async () => {
    const entries = await Promise.all(DOCUMENTS.map(async (d) => ({ name: d.name, kind: d.kind, info: await readDocumentInfo(d.file) })));
    expect(entries.map((e) => e.name)).toEqual([...OPENAPI_DOCS.map((d) => d.name), 'webhooks']);
    const html = landingPage(entries);
    for (const e of entries) {
      expect(html).toContain(`<section id="${e.name}">`);
      expect(html).toContain(`version ${e.info.version}`);
      expect(html).toContain(`href="./${e.name}.html"`);
    }
    expect(html).toContain('href="/openapi/orders.json"');
    expect(html).toContain('href="/asyncapi/webhooks.json"');
  });

  it('renders a description up to its first heading, escaping HTML', () => {
    const html = purposeHtml('What it **does**: `POST` <b>x</b>.\n\n- one\n- two `a`\n\n## Details\nnot shown');
    expect(html).toBe('<p>What it <strong>does</strong>: <code>POST</code> &#60;b&#62;x&#60;/b&#62;.</p>\n        <ul><li>one</li><li>two <code>a</code></li></ul>');
  });
});
