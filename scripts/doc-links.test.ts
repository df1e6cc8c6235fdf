// Every relative link of the tracked Markdown resolves inside the repository, anchors included:
// a clone has only what git tracks, so a link to ../anything or to an ignored build is dead.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { anchorsOf, deadLinks, linksOf, type DocTree } from './lib/doc-links.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function trackedTree(): DocTree {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  return { files, read: (file) => readFileSync(path.join(ROOT, file), 'utf8') };
}

const tree = (pages: Record<string, string>, others: string[] = []): DocTree => ({
  files: [...Object.keys(pages), ...others],
  read: (file) => pages[file] ?? '',
});

describe('links of the Markdown pages', () => {
  it('every relative link of every tracked Markdown file resolves inside the repository', () => {
    const docs = trackedTree();
    expect(docs.files.filter((f) => f.endsWith('.md')).length).toBeGreaterThan(5);
    expect(deadLinks(docs)).toEqual([]);
  });

  it('finds links and images, not the look-alikes in code', () => {
    const text = '[a](x.md) ![b](img/y.png) `[c](z.md)`\n\n```\n[d](w.md)\n```\n\n[e][ref]\n\n[ref]: v.md#part\n';
    expect(linksOf(text)).toEqual(['x.md', 'img/y.png', 'v.md#part']);
  });

  it('slugs headings as GitHub does, numbering repeats', () => {
    const anchors = anchorsOf('# Several instances on PostgreSQL\n## `npm run bench:api`\n## Setup\n## Setup\n<a id="here"></a>\n');
    expect([...anchors]).toEqual(['several-instances-on-postgresql', 'npm-run-benchapi', 'setup', 'setup-1', 'here']);
  });

  it('names each dead link, anchor and escape from the repository', () => {
    const problems = deadLinks(
      tree(
        {
          'README.md': '[ok](docs/ops.md#settings) [folder](server/) [self](#top) [gone](docs/none.md) [bad](docs/ops.md#nowhere) [out](../shared/PRODUCT.md) [web](https://example.com/x) [ignored](docs/api/index.html)',
          'docs/ops.md': '# Top\n## Settings\n[back](../README.md#top) [up](../../x.md)',
        },
        ['server/main.ts'],
      ),
    );
    expect(problems).toEqual([
      'README.md: #top: no heading #top in README.md',
      'README.md: docs/none.md: no such tracked file or folder',
      'README.md: docs/ops.md#nowhere: no heading #nowhere in docs/ops.md',
      'README.md: ../shared/PRODUCT.md: leaves the repository',
      'README.md: docs/api/index.html: no such tracked file or folder',
      'docs/ops.md: ../README.md#top: no heading #top in README.md',
      'docs/ops.md: ../../x.md: leaves the repository',
    ]);
  });
});
