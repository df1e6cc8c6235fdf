// The /docs landing page: one entry per contract document, its title, version and what it is
// for (the first paragraph of its own info.description), and its links. Nothing is listed by hand.
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';

export interface DocumentInfo {
  title: string;
  version: string;
  description: string;
}

export interface IndexEntry {
  name: string;
  kind: 'openapi' | 'asyncapi';
  info: DocumentInfo;
}

export async function readDocumentInfo(file: string): Promise<DocumentInfo> {
  const doc = parseYaml(await readFile(file, 'utf8')) as { info?: Partial<DocumentInfo> };
  const info = doc.info ?? {};
  if (!info.title || !info.version) throw new Error(`${file}: info.title and info.version are required`);
  return { title: info.title, version: info.version, description: info.description ?? '' };
}

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The markdown a first paragraph uses, as HTML: code spans, bold, list items. */
export function inlineMarkdown(text: string): string {
  return escapeHtml(text)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');
}

/** What a document is for: its description up to the first heading, as paragraphs and lists. */
export function purposeHtml(description: string): string {
  const intro = description.split(/\n#{1,6} /)[0] ?? '';
  return intro
    .split(/\n\s*\n/)
    .map((block) => block.trim())
    .filter((block) => block !== '')
    .map((block) => {
      const items = block.split(/\n(?=\s*(?:[-*]|\d+\.) )/);
      if (items.length > 1 || /^\s*(?:[-*]|\d+\.) /.test(block)) {
        const lis = items.map((item) => `<li>${inlineMarkdown(item.replace(/^\s*(?:[-*]|\d+\.) /, '').replace(/\s*\n\s*/g, ' '))}</li>`);
        return `<ul>${lis.join('')}</ul>`;
      }
      return `<p>${inlineMarkdown(block.replace(/\s*\n\s*/g, ' '))}</p>`;
    })
    .join('\n        ');
}

function entryHtml(entry: IndexEntry): string {
  const kind = entry.kind === 'openapi' ? 'OpenAPI 3.1' : 'AsyncAPI 3';
  const links = [`<a class="primary" href="./${entry.name}.html">Reference</a>`];
  links.push(
    entry.kind === 'openapi'
      ? `<a href="/openapi/${entry.name}.json">OpenAPI document (JSON)</a>`
      : `<a href="/asyncapi/${entry.name}.json">AsyncAPI document (JSON)</a>`,
  );
  return `<section id="${entry.name}">
      <h2><a href="./${entry.name}.html">${escapeHtml(entry.info.title)}</a></h2>
      <p class="meta">${kind} · version ${escapeHtml(entry.info.version)} · <code>spec/${entry.kind === 'openapi' ? `${entry.name}.openapi.yaml` : `${entry.name}.asyncapi.yaml`}</code></p>
      <div class="purpose">
        ${purposeHtml(entry.info.description)}
      </div>
      <p class="links">${links.join(' ')}</p>
    </section>`;
}

export function landingPage(entries: readonly IndexEntry[]): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Payments service reference</title>
    <style>
      body { font-family: system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; color: #1f2328; }
      h1 { margin-bottom: 0.25rem; }
      section { border-top: 1px solid #d0d7de; padding: 0.75rem 0 0.5rem; }
      h2 { margin: 0.25rem 0; font-size: 1.25rem; }
      h2 a { color: inherit; text-decoration: none; }
      .meta { color: #59636e; font-size: 0.875rem; margin: 0; }
      code { font-size: 0.875em; background: #f6f8fa; padding: 0.1em 0.3em; border-radius: 4px; }
      .links a { margin-right: 1rem; }
      .links a.primary { font-weight: 600; }
    </style>
  </head>
  <body>
    <h1>Payments service reference</h1>
    <p>The contract of the service, one page per document: the HTTP APIs (OpenAPI) and what the service sends to merchants' receivers (AsyncAPI). Each page is rendered from the document in <code>spec/</code>.</p>
    ${entries.map(entryHtml).join('\n    ')}
  </body>
</html>
`;
}
