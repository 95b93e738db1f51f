/**
 * The README is the front door and the manuals in docs/ hold the rest: every manual is linked from the README, and
 * every relative link in the README and the manuals leads to a file that exists and, with `#anchor`, to a heading
 * of it (GitHub's slugs), so moving a section cannot leave a reader at a dead link.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../harness/crossplane/catalog';
import { manuals, readme } from '../support/docs';

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a markdown file's headings (outside code blocks). */
function anchors(text: string): Set<string> {
  const out = new Set<string>();
  let fence = false;
  for (const l of text.split('\n')) {
    if (l.startsWith('```')) fence = !fence;
    const m = fence ? null : /^#+ (.+)$/.exec(l);
    if (m) out.add(slug(m[1] as string));
  }
  return out;
}

/** The relative links `[text](target)` of a markdown file outside code blocks. */
function links(text: string): string[] {
  let fence = false;
  const out: string[] = [];
  for (const l of text.split('\n')) {
    if (l.startsWith('```')) fence = !fence;
    if (fence) continue;
    for (const m of l.matchAll(/\]\(([^)\s]+)\)/g)) if (!/^[a-z]+:/.test(m[1] as string)) out.push(m[1] as string);
  }
  return out;
}

const docs = new Map<string, string>([['README.md', readme()], ...[...manuals()].map(([n, t]) => [`docs/${n}.md`, t] as [string, string])]);

describe('the README and the manuals', () => {
  it('link every manual in docs/ from the README', () => {
    const linked = new Set(links(readme()).map((l) => l.split('#')[0]));
    expect([...manuals().keys()].map((n) => `docs/${n}.md`).filter((f) => !linked.has(f))).toEqual([]);
  });

  it('has no relative link to a missing file or heading', () => {
    const dead: string[] = [];
    for (const [doc, text] of docs)
      for (const link of links(text)) {
        const [path, anchor] = link.split('#') as [string, string | undefined];
        const target = path === '' ? join(ROOT, doc) : join(ROOT, dirname(doc), path);
        if (!existsSync(target)) dead.push(`${doc}: ${link} (no file ${relative(ROOT, target)})`);
        else if (anchor !== undefined && target.endsWith('.md') && !anchors(readFileSync(target, 'utf8')).has(anchor))
          dead.push(`${doc}: ${link} (no heading #${anchor} in ${relative(ROOT, target)})`);
      }
    expect(dead).toEqual([]);
  });

  it('keep the README a front door: the manuals are not repeated in it', () => {
    const headings = readme()
      .split('\n')
      .filter((l) => l.startsWith('## '));
    for (const [name, text] of manuals()) {
      const title = /^# (.+)$/m.exec(text)?.[1];
      expect(title, `docs/${name}.md starts with a "# " title`).toBeDefined();
      expect(headings, `README.md repeats the section of docs/${name}.md`).not.toContain(`## ${title}`);
    }
  });
});
