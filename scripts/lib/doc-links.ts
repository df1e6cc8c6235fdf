// The relative links of the repository's Markdown, checked as GitHub resolves them: every link
// must name a tracked file or folder inside the repository (a clone has nothing else), and an
// anchor must name a heading of the target page, slugged as GitHub slugs it.
import path from 'node:path';
import GithubSlugger from 'github-slugger';
import MarkdownIt, { type Token } from 'markdown-it';

const markdown = new MarkdownIt({ html: true });

/** The tracked files the links may point at, and how to read a Markdown file among them. */
export interface DocTree {
  /** Repository-relative paths with `/` separators. */
  files: readonly string[];
  read(file: string): string;
}

export interface Link {
  /** The Markdown file the link is in. */
  from: string;
  href: string;
}

/** Every link and image target of one Markdown text, in order (code spans and blocks have none). */
export function linksOf(text: string): string[] {
  const hrefs: string[] = [];
  const visit = (tokens: Token[]): void => {
    for (const t of tokens) {
      const target = t.type === 'link_open' ? t.attrGet('href') : t.type === 'image' ? t.attrGet('src') : null;
      if (target !== null) hrefs.push(String(target));
      if (t.children) visit(t.children);
    }
  };
  visit(markdown.parse(text, {}));
  return hrefs;
}

/** The anchors a page offers: its headings as GitHub slugs them, and explicit HTML ids. */
export function anchorsOf(text: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  const tokens = markdown.parse(text, {});
  tokens.forEach((t, i) => {
    if (t.type === 'heading_open') anchors.add(slugger.slug(plainText(tokens[i + 1]?.children ?? [])));
    if (t.type === 'html_block' || t.type === 'html_inline') for (const m of t.content.matchAll(/\b(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
  });
  for (const t of tokens) for (const c of t.children ?? []) if (c.type === 'html_inline') for (const m of c.content.matchAll(/\b(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
  return anchors;
}

function plainText(inline: Token[]): string {
  return inline.map((c) => (c.type === 'text' || c.type === 'code_inline' ? c.content : '')).join('');
}

/** A link that leaves the page for another scheme or host: not this check's business. */
const isAbsolute = (href: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//');

/** What is wrong with each relative link of `files`' Markdown pages; empty when every one resolves. */
export function deadLinks(tree: DocTree): string[] {
  const tracked = new Set(tree.files);
  const folders = new Set(tree.files.flatMap((f) => f.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
  const anchors = new Map<string, Set<string>>();
  const anchorsIn = (file: string): Set<string> => {
    let found = anchors.get(file);
    if (!found) anchors.set(file, (found = anchorsOf(tree.read(file))));
    return found;
  };
  const problems: string[] = [];
  for (const from of tree.files.filter((f) => f.endsWith('.md'))) {
    for (const href of linksOf(tree.read(from))) {
      const problem = checkLink({ from, href }, tracked, folders, anchorsIn);
      if (problem) problems.push(`${from}: ${href}: ${problem}`);
    }
  }
  return problems;
}

function checkLink(link: Link, tracked: Set<string>, folders: Set<string>, anchorsIn: (file: string) => Set<string>): string | null {
  if (isAbsolute(link.href)) return null;
  const [rawPath = '', fragment] = link.href.split('#', 2) as [string, string | undefined];
  const pathPart = decodeURIComponent(rawPath.split('?')[0]!);
  const base = pathPart.startsWith('/') ? '' : path.posix.dirname(link.from);
  const target = pathPart === '' ? link.from : path.posix.normalize(path.posix.join(base, pathPart)).replace(/\/$/, '');
  if (target === '..' || target.startsWith('../')) return 'leaves the repository';
  const isFile = tracked.has(target);
  if (!isFile && !folders.has(target) && target !== '.') return 'no such tracked file or folder';
  if (fragment === undefined || fragment === '' || !isFile || !target.endsWith('.md')) return null;
  return anchorsIn(target).has(decodeURIComponent(fragment)) ? null : `no heading #${fragment} in ${target}`;
}
