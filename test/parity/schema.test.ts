/**
 * Schema parity: for each of the 11 APIs, the claim CRD Crossplane derives from our XRD against the one it derives
 * from Klutch's own XRD (schemas/klutch-crossplane-api/), path by path — properties, types, enums, required lists,
 * defaults, bounds, patterns — plus the XRD's names, default composition, delete policy and printer columns.
 * CEL rules that only bound a number or match a pattern are compared as bounds and patterns; every other CEL rule is
 * compared by effect: test/cluster/claims.test.ts sends every claim case to Klutch's XRDs and ours on a real API
 * server and requires the same verdict. Every difference is a delta in test/parity/deltas.ts, checked both ways.
 */
import { describe, expect, it } from 'vitest';
import { loadCatalog, synthCatalog } from '../../harness/crossplane/catalog';
import type { XrdObject } from '../../lib/xcrd';
import { ANY, DELTAS, type SchemaDelta, type XrdDelta } from './deltas';
import { claimSchema, FACETS, flatten, klutchXrds } from './klutch';

const apis = await loadCatalog();
const out = await synthCatalog('v1');
const klutch = klutchXrds();
const ours = new Map(
  apis.map((a) => [a.name, out.get(`packages/dataservices/apis/${a.name}/definition.yaml`)?.[0] as unknown as XrdObject]),
);

interface Difference {
  readonly api: string;
  readonly path: string;
  readonly facet: string;
  readonly klutch: unknown;
  readonly ours: unknown;
}

/** Path-by-path differences of the claim schemas, CEL rules aside (compared by effect on the API server). */
function schemaDifferences(api: string): Difference[] {
  const k = flatten(claimSchema(klutch.get(api)!.xrd));
  const o = flatten(claimSchema(ours.get(api)!));
  const diffs: Difference[] = [];
  for (const path of [...new Set([...k.keys(), ...o.keys()])].sort()) {
    const kf = k.get(path);
    const of = o.get(path);
    if (!kf || !of) {
      diffs.push({ api, path, facet: 'present', klutch: kf !== undefined, ours: of !== undefined });
      continue;
    }
    for (const facet of FACETS) {
      if (facet === 'cel') continue;
      if (JSON.stringify(kf[facet]) !== JSON.stringify(of[facet])) diffs.push({ api, path, facet, klutch: kf[facet], ours: of[facet] });
    }
  }
  return diffs;
}

/** The XRD fields a claim's user meets besides the schema: names, default composition, delete policy, printer columns. */
function xrdFacts(xrd: XrdObject): Record<string, unknown> {
  const spec = xrd.spec as XrdObject['spec'] & { defaultCompositionRef?: { name: string }; defaultCompositeDeletePolicy?: string };
  const v = spec.versions[0]!;
  return {
    group: spec.group,
    names: { kind: spec.names.kind, plural: spec.names.plural },
    claimNames: { kind: spec.claimNames?.kind, plural: spec.claimNames?.plural },
    defaultCompositionRef: spec.defaultCompositionRef?.name,
    // Background is what the API server stores for an XRD that names none.
    defaultCompositeDeletePolicy: spec.defaultCompositeDeletePolicy ?? 'Background',
    versions: spec.versions.map((x) => `${x.name} served=${x.served} referenceable=${x.referenceable}`),
    printerColumns: (v.additionalPrinterColumns ?? []).map((c) => `${c.name} ${c.type} ${c.jsonPath}`),
  };
}

const schemaDeltas = DELTAS.filter((d): d is SchemaDelta => d.kind === 'schema');
const xrdDeltas = DELTAS.filter((d): d is XrdDelta => d.kind === 'xrd');

describe('claim schemas equal Klutch v1.5.0, deliberate deltas aside', () => {
  it('compares all 11 APIs, one Klutch XRD each', () => {
    expect([...klutch.keys()].sort()).toEqual([...ours.keys()].sort());
    expect(ours.size).toBe(11);
  });

  it.each([...ours.keys()].sort())('%s: every path, type, enum, required list, default, bound and pattern', (api) => {
    const diffs = schemaDifferences(api);
    const unexplained: Difference[] = [];
    for (const d of diffs) {
      const delta = schemaDeltas.find((x) => x.apis.includes(api) && x.path === d.path && x.facet === d.facet);
      if (!delta) unexplained.push(d);
      else {
        for (const [side, got, want] of [
          ['Klutch', d.klutch, delta.klutch],
          ['ours', d.ours, delta.ours],
        ] as const) {
          if (want === ANY) expect(got, `${side}: ${d.path} ${d.facet} is set (delta: ${delta.why})`).toBeDefined();
          else expect(got, `${side}: ${d.path} ${d.facet} (delta: ${delta.why})`).toEqual(want);
        }
      }
    }
    expect(unexplained, 'differences from Klutch that test/parity/deltas.ts does not list').toEqual([]);
    const stale = schemaDeltas
      .filter((x) => x.apis.includes(api))
      .filter((x) => !diffs.some((d) => d.path === x.path && d.facet === x.facet))
      .map((x) => `${x.path} ${x.facet}: ${x.why}`);
    expect(stale, 'deltas in test/parity/deltas.ts that no longer differ').toEqual([]);
  });

  it.each([...ours.keys()].sort())('%s: names, default composition, delete policy and printer columns', (api) => {
    const k = xrdFacts(klutch.get(api)!.xrd);
    const o = xrdFacts(ours.get(api)!);
    for (const d of xrdDeltas.filter((x) => x.apis.includes(api))) {
      expect(k[d.field], `Klutch's ${d.field} (delta: ${d.why})`).toEqual(d.klutch);
      expect(o[d.field], `our ${d.field} (delta: ${d.why})`).toEqual(d.ours);
      k[d.field] = d.ours;
    }
    expect(o).toEqual(k);
  });

  it('names every API a delta lists', () => {
    for (const d of [...schemaDeltas, ...xrdDeltas]) for (const api of d.apis) expect(ours.has(api), `${api} in ${d.why}`).toBe(true);
  });
});
