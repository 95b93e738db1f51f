/** The table of deliberate deltas as a reader meets it: each has a reason, and the README's compatibility section names it. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/catalog';
import { DELTAS, type Delta } from './deltas';

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const start = readme.indexOf('## Compatibility with Klutch');
const section = readme.slice(start, readme.indexOf('\n## ', start + 1));

/** What the README writes, in backticks, to name a delta. */
function names(d: Delta): string {
  switch (d.kind) {
    case 'schema':
      return d.path;
    case 'xrd':
      return d.field;
    case 'verdict':
      return d.case === '<any claim without compositionRef>' ? 'defaultCompositionRef' : d.case;
    case 'mapping':
      return d.path;
  }
}

describe('the deltas from Klutch', () => {
  it('have a reason each, and mappings their evidence', () => {
    for (const d of DELTAS) {
      expect(d.why.length, JSON.stringify(d)).toBeGreaterThan(20);
      if (d.kind === 'mapping') expect(d.evidence.length, d.path).toBeGreaterThan(10);
    }
  });

  it("are named in the README's compatibility section", () => {
    expect(start, 'README section "## Compatibility with Klutch"').toBeGreaterThan(0);
    expect(DELTAS.map(names).filter((n) => !section.includes(`\`${n}\``))).toEqual([]);
  });

  it('refuse a claim Klutch accepts only with the reason its backend would fail it, listed in the README', () => {
    const refusing = DELTAS.filter((d) => (d.kind === 'schema' || d.kind === 'verdict') && d.refuses !== undefined);
    for (const d of refusing) expect(section, `the README lists ${names(d)} among the claims ours refuses`).toContain(names(d));
    if (refusing.length === 0) expect(section).toContain('Ours refuses no claim that Klutch accepts');
  });
});
