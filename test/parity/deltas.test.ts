/** The table of deliberate deltas as a reader meets it: each has a reason, and the compatibility manual names it. */
import { describe, expect, it } from 'vitest';
import { manual } from '../support/docs';
import { DELTAS, type Delta } from './deltas';

/** docs/compatibility.md, "Compatibility with Klutch". */
const section = manual('compatibility');

/** What the manual writes, in backticks, to name a delta. */
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

  it('are named in the compatibility manual', () => {
    expect(section).toContain('# Compatibility with Klutch');
    expect(DELTAS.map(names).filter((n) => !section.includes(`\`${n}\``))).toEqual([]);
  });

  it('refuse a claim Klutch accepts only with the reason its backend would fail it, listed in the manual', () => {
    const refusing = DELTAS.filter((d) => (d.kind === 'schema' || d.kind === 'verdict') && d.refuses !== undefined);
    for (const d of refusing) expect(section, `docs/compatibility.md lists ${names(d)} among the claims ours refuses`).toContain(names(d));
    if (refusing.length === 0) expect(section).toContain('Ours refuses no claim that Klutch accepts');
  });
});
