/**
 * Mapping parity: for every Composition of Klutch's (a9s and a8s), each claim field reaches the same place in the
 * composed resource under the same key in ours, with the same transforms (plan → size and replica tables for a8s,
 * lower-casing, defaults), and the status Klutch copies back reaches the same place in the composite.
 *
 * Klutch's side is its Composition evaluated as function-patch-and-transform would (./patch-and-transform.ts); ours is
 * the synthesized Composition's input given to our function's compose and status code. Both get the composite of
 * every valid claim case of test/cases/ for that composition, and every field a Klutch patch reads must be set by at
 * least one case. The composed resources must be equal leaf by leaf; every difference is a `mapping` delta in
 * test/parity/deltas.ts with its evidence, checked both ways. On the v2 target (no claims), an a8s object takes the
 * namespaced composite's own name and namespace where Klutch takes the claim's.
 */
import { describe, expect, it } from 'vitest';
import type { Api } from '../../apis/api';
import { composeResource } from '../../functions/dataservices/compose';
import { get, set } from '../../lib/fieldpath';
import type { Input } from '../../recipe';
import { observeStatus } from '../../functions/dataservices/status';
import { loadCases } from '../cases';
import type { CreateCase } from '../cases/types';
import { loadCatalog, synthCatalog } from '../../harness/crossplane/catalog';
import { ANY, DELTAS, type MappingDelta } from './deltas';
import { apiNameOf, klutchCompositions, type KlutchComposition } from './klutch';
import { composeFromPatches, statusFromPatches } from './patch-and-transform';

type Obj = Record<string, unknown>;

const apis = new Map((await loadCatalog()).map((a) => [a.name, a]));
const v1 = await synthCatalog('v1');
const v2 = await synthCatalog('v2');
const klutch = klutchCompositions();
const cases = new Map((await loadCases([...apis.values()])).map((c) => [c.api, c]));
const mappingDeltas = DELTAS.filter((d): d is MappingDelta => d.kind === 'mapping');
const seen = new Set<MappingDelta>();

const CLAIM = { name: 'my-claim', namespace: 'team-a' };
/** What a real Object or MR carries besides the status fields a Composition copies. */
const CONDITIONS = [
  { type: 'Ready', status: 'True', reason: 'Available' },
  { type: 'Synced', status: 'True', reason: 'ReconcileSuccess' },
];

/** The backend's Composition's input (on v2 the selection Composition holds the same: test/synth/output.test.ts). */
function ourInput(out: Map<string, Obj[]>, api: string, backend: string): Input {
  const comp = out.get(`packages/dataservices/apis/${api}/composition-${backend}.yaml`)?.[0] as { spec: { pipeline: { input: Input }[] } };
  return comp.spec.pipeline[0]!.input;
}

/** The composite Crossplane makes of a claim (v1): cluster-scoped, labelled with the claim's name and namespace. */
function composite(api: Api, composition: string, c: CreateCase): Obj {
  return {
    apiVersion: api.apiVersion,
    kind: api.compositeKind('v1'),
    metadata: {
      name: 'my-claim-x7k2p',
      labels: {
        'crossplane.io/claim-name': CLAIM.name,
        'crossplane.io/claim-namespace': CLAIM.namespace,
        'crossplane.io/composite': 'my-claim-x7k2p',
      },
    },
    spec: {
      ...structuredClone(c.spec),
      compositionRef: { name: composition },
      claimRef: { apiVersion: api.apiVersion, kind: api.kind, ...CLAIM },
    },
  };
}

/** Every leaf of an object by field path (`metadata.labels[crossplane.io/claim-name]`); arrays are leaves. */
function leaves(o: unknown, at = '', out = new Map<string, unknown>()): Map<string, unknown> {
  if (o === null || typeof o !== 'object' || Array.isArray(o)) {
    out.set(at, o);
    return out;
  }
  for (const [k, v] of Object.entries(o)) leaves(v, /[./[\]]/.test(k) ? `${at}[${k}]` : at ? `${at}.${k}` : k, out);
  return out;
}

function covers(d: MappingDelta, composition: string, path: string): boolean {
  return d.compositions.includes(composition) && (path === d.path || path.startsWith(`${d.path}.`) || path.startsWith(`${d.path}[`));
}

function matches(want: unknown, got: unknown): boolean {
  return want === ANY ? got !== undefined : JSON.stringify(want) === JSON.stringify(got);
}

/** Leaf-by-leaf differences that no delta explains, as readable lines. */
function unexplained(composition: string, label: string, theirs: Map<string, unknown>, ours: Map<string, unknown>): string[] {
  const out: string[] = [];
  for (const path of [...new Set([...theirs.keys(), ...ours.keys()])].sort()) {
    const k = theirs.get(path);
    const o = ours.get(path);
    if (JSON.stringify(k) === JSON.stringify(o)) continue;
    const delta = mappingDeltas.find((d) => covers(d, composition, path));
    if (delta && matches(delta.klutch, k) && matches(delta.ours, o)) {
      seen.add(delta);
      continue;
    }
    out.push(
      `${label}: ${path}: Klutch ${JSON.stringify(k)}, ours ${JSON.stringify(o)}${delta ? ` (the delta says Klutch ${JSON.stringify(delta.klutch)}, ours ${JSON.stringify(delta.ours)})` : ''}`,
    );
  }
  return out;
}

/** Our composition for one of Klutch's: same name, our API of its composite kind. */
function ours(k: KlutchComposition): { api: Api; backend: 'a9s' | 'a8s' } {
  const api = apis.get(apiNameOf(k.compositeKind.replace(/^X/, '')));
  if (!api) throw new Error(`${k.file}: no API of ours composes ${k.compositeKind}`);
  const backend = k.name.slice(0, 3) as 'a9s' | 'a8s';
  expect(api.compositionName(backend), `${k.file}: our composition of the same name`).toBe(k.name);
  return { api, backend };
}

/** The valid claim cases a composition composes: those naming it, and those relying on it as the default. */
function claimsFor(api: Api, backend: 'a9s' | 'a8s'): CreateCase[] {
  return (cases.get(api.name)?.create ?? []).filter((c) => c.valid && (c.backend ?? api.defaultBackend) === backend);
}

describe('mapping parity with Klutch v1.5.0', () => {
  it('compares all 15 of Klutch Compositions, one resource each', () => {
    expect(klutch.size).toBe(15);
    for (const k of klutch.values()) expect(k.resources, k.file).toHaveLength(1);
  });

  describe.each([...klutch.keys()].sort())('%s', (name) => {
    const k = klutch.get(name)!;
    const { resources } = k;
    const { base, patches } = resources[0]!;

    it('composes what Klutch composes for every claim case, leaf by leaf', () => {
      const { api, backend } = ours(k);
      const input = ourInput(v1, api.name, backend);
      const claims = claimsFor(api, backend);
      expect(claims.length, `valid cases for ${name} in test/cases/${api.name}.cases.ts`).toBeGreaterThan(0);
      const problems: string[] = [];
      for (const c of claims) {
        const xr = composite(api, name, c);
        const theirs = composeFromPatches(base as Obj, patches, xr);
        const mine = composeResource(input, xr).resource;
        problems.push(...unexplained(name, c.name, leaves(theirs), leaves(mine)));
      }
      expect(problems, 'differences that test/parity/deltas.ts does not explain').toEqual([]);
    });

    it('reads every claim field a Klutch patch reads, in at least one case', () => {
      const { api, backend } = ours(k);
      const composites = claimsFor(api, backend).map((c) => composite(api, name, c));
      const unread = patches
        .filter((p) => (p.type ?? 'FromCompositeFieldPath') === 'FromCompositeFieldPath' && p.fromFieldPath.startsWith('spec.'))
        .map((p) => p.fromFieldPath)
        .filter((from) => !composites.some((xr) => get(xr, from) !== undefined));
      expect(unread, `fields no valid case of test/cases/${api.name}.cases.ts sets for ${name}`).toEqual([]);
    });

    it('copies back every status field Klutch copies, to the same place', () => {
      const { api, backend } = ours(k);
      const input = ourInput(v1, api.name, backend);
      const xr = composite(api, name, claimsFor(api, backend)[0]!);
      const observed = composeResource(input, xr).resource;
      set(observed, 'status.conditions', CONDITIONS);
      const toComposite = patches.filter((p) => p.type === 'ToCompositeFieldPath');
      for (const p of toComposite)
        if (p.fromFieldPath !== 'status.conditions') set(observed, p.fromFieldPath, `observed ${p.fromFieldPath}`);
      const theirs = statusFromPatches(patches, observed);
      const mine = observeStatus(input, observed).composite;
      // Ours may copy more (the whole a8s status, more provider fields); what Klutch copies must be there.
      const missing: string[] = [];
      for (const p of toComposite) {
        const problems = unexplained(
          name,
          'status',
          new Map([[p.toFieldPath, get(theirs, p.toFieldPath)]]),
          new Map([[p.toFieldPath, get(mine, p.toFieldPath)]]),
        );
        missing.push(...problems);
      }
      expect(missing).toEqual([]);
    });
  });

  it.each([...klutch.keys()].filter((n) => n.startsWith('a8s-')).sort())(
    "%s on the v2 target: the a8s object takes the namespaced composite's name and namespace, as Klutch takes the claim's",
    (name) => {
      const k = klutch.get(name)!;
      const { api, backend } = ours(k);
      const input = ourInput(v2, api.name, backend);
      const c = claimsFor(api, backend)[0]!;
      const xr = {
        apiVersion: api.apiVersion,
        kind: api.compositeKind('v2'),
        metadata: { ...CLAIM },
        spec: { ...structuredClone(c.spec), compositionRef: { name } },
      };
      const theirs = composeFromPatches(k.resources[0]!.base as Obj, k.resources[0]!.patches, composite(api, name, c));
      const mine = composeResource(input, xr).resource;
      for (const path of [...leaves(theirs).keys()].filter((p) => /namespace|\.name$/.test(p) && p.includes('manifest'))) {
        expect(get(mine, path), path).toEqual(get(theirs, path));
      }
    },
  );

  it('sees every mapping delta of test/parity/deltas.ts hold (a delta that no longer differs fails)', () => {
    const stale = mappingDeltas.filter((d) => !seen.has(d)).map((d) => `${d.compositions.join(',')} ${d.path}: ${d.why}`);
    expect(stale).toEqual([]);
  });
});
