import { describe, expect, it } from 'vitest';
import type { AppClusterBinding } from '../../exports/bind-api';
import {
  AcbLabels,
  chooseRoot,
  hashedRootNamespace,
  klutchRootNamespace,
  ownership,
  rootCandidates,
  unambiguousKlutchName,
} from './app-cluster-binding.root';

const acb = (namespace: string, name: string, o: { uid?: string; rootNamespace?: string } = {}): AppClusterBinding => ({
  apiVersion: 'klutch.anynines.com/v1alpha1',
  kind: 'AppClusterBinding',
  metadata: { namespace, name, uid: o.uid ?? `${namespace}/${name}` },
  spec: { kubeconfigSecretRef: { namespace, name: 's', key: 'kubeconfig' } },
  ...(o.rootNamespace ? { status: { rootNamespace: o.rootNamespace } } : {}),
});
/** The name an AppClusterBinding gets when nothing exists yet. */
const fresh = async (a: AppClusterBinding) => chooseRoot(a, async () => null);
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

describe('the binding root namespace of an AppClusterBinding', () => {
  it("gives team/a-prod and team-a/prod two names, though Klutch's is the same for both", async () => {
    const a = acb('team', 'a-prod');
    const b = acb('team-a', 'prod');
    expect(klutchRootNamespace(a)).toBe(klutchRootNamespace(b));
    const [ra, rb] = [await fresh(a), await fresh(b)];
    expect(ra).not.toEqual(rb);
    expect(ra).toEqual({ root: hashedRootNamespace(a) });
    expect(rb).toEqual({ root: hashedRootNamespace(b) });
  });

  it.each([
    ['team', 'prod', 'klutch-bind-team-prod'],
    ['team', 'a-prod', undefined],
    ['team-a', 'prod', undefined],
    ['default', 'my.cluster', undefined], // no DNS label
    ['t'.repeat(30), 'n'.repeat(30), undefined], // over 63 characters
  ])("keeps Klutch's name for %s/%s only where no other can produce it: %s", (ns, name, want) => {
    expect(unambiguousKlutchName(acb(ns, name))).toBe(want);
  });

  it('is injective over every split of the same dashed words, and never a Klutch-form name', () => {
    const words = ['team', 'a', 'prod', 'x', 'eu', '1'];
    const seen = new Map<string, string>();
    const pairs: [string, string][] = [];
    // Every way to cut every sequence of up to four words into a namespace and a name at a dash.
    const seqs = (n: number): string[][] => (n === 0 ? [[]] : seqs(n - 1).flatMap((s) => words.map((w) => [...s, w])));
    for (let n = 2; n <= 4; n++)
      for (const s of seqs(n)) for (let i = 1; i < s.length; i++) pairs.push([s.slice(0, i).join('-'), s.slice(i).join('-')]);
    for (const [ns, name] of pairs) {
      const a = acb(ns, name);
      const names = [unambiguousKlutchName(a), hashedRootNamespace(a)].filter((x): x is string => Boolean(x));
      for (const r of names) {
        expect(r).toMatch(DNS_LABEL);
        const had = seen.get(r);
        if (had !== undefined) expect(had, r).toBe(`${ns}/${name}`);
        seen.set(r, `${ns}/${name}`);
      }
      // Two dashes or more after the prefix: no Klutch-form name (one dash) can be a hashed one.
      expect(hashedRootNamespace(a).slice('klutch-bind-'.length).split('-').length).toBeGreaterThanOrEqual(3);
    }
    expect(pairs.length).toBeGreaterThan(1000);
  });

  it('fits 63 characters for the longest namespace and name, and keeps a readable start', () => {
    const a = acb('n'.repeat(63), `${'x'.repeat(60)}.example.com`);
    const r = hashedRootNamespace(a);
    expect(r).toMatch(DNS_LABEL);
    expect(r).toHaveLength(63);
    expect(r.startsWith('klutch-bind-nnnn')).toBe(true);
    expect(hashedRootNamespace(acb('team-a', 'my.app'))).toMatch(/^klutch-bind-team-a-my-app-[0-9a-f]{16}$/);
    // The cut never leaves a dash before the separator (the parts are cut, then trailing dashes dropped).
    expect(hashedRootNamespace(acb(`${'a'.repeat(16)}-b`, 'c'))).toMatch(/^klutch-bind-a{16}-c-[0-9a-f]{16}$/);
  });

  it("offers Klutch's ambiguous name only as a legacy one (an earlier version's namespace, to keep)", () => {
    expect(rootCandidates(acb('team', 'prod'))).toEqual({
      klutch: 'klutch-bind-team-prod',
      hashed: hashedRootNamespace(acb('team', 'prod')),
    });
    expect(rootCandidates(acb('team-a', 'prod'))).toEqual({
      legacy: 'klutch-bind-team-a-prod',
      hashed: hashedRootNamespace(acb('team-a', 'prod')),
    });
  });
});

describe('whose an object is', () => {
  const me = acb('team-a', 'prod', { uid: 'u1' });
  it.each([
    ['my uid', { [AcbLabels.uid]: 'u1', [AcbLabels.namespace]: 'team-a', [AcbLabels.name]: 'prod' }, 'ours'],
    ['an earlier version made it for me (no uid)', { [AcbLabels.namespace]: 'team-a', [AcbLabels.name]: 'prod' }, 'ours'],
    [
      "another's uid, my name (an earlier one of the same name)",
      { [AcbLabels.uid]: 'u0', [AcbLabels.namespace]: 'team-a', [AcbLabels.name]: 'prod' },
      { owner: 'AppClusterBinding team-a/prod (uid u0)' },
    ],
    [
      "the colliding one's",
      { [AcbLabels.uid]: 'u2', [AcbLabels.namespace]: 'team', [AcbLabels.name]: 'a-prod' },
      { owner: 'AppClusterBinding team/a-prod (uid u2)' },
    ],
    [
      'an earlier version made it for another',
      { [AcbLabels.namespace]: 'team', [AcbLabels.name]: 'a-prod' },
      { owner: 'AppClusterBinding team/a-prod' },
    ],
    ['no labels', {}, { owner: 'nobody: it was not made for an AppClusterBinding' }],
  ])('%s', (_why, labels, want) => expect(ownership(labels, me)).toEqual(want));
});

describe('chooseRoot', () => {
  const labels = (a: AppClusterBinding) => ({
    [AcbLabels.uid]: a.metadata.uid!,
    [AcbLabels.namespace]: a.metadata.namespace!,
    [AcbLabels.name]: a.metadata.name!,
  });
  const existing = (m: Record<string, Record<string, string>>) => async (n: string) => m[n] ?? null;

  it("never picks a namespace another holds: Klutch's taken goes hashed, the hashed one taken is refused naming the holder", async () => {
    const me = acb('team', 'prod');
    const other = acb('x', 'y');
    const hashed = hashedRootNamespace(me);
    expect(await chooseRoot(me, existing({ 'klutch-bind-team-prod': labels(other) }))).toEqual({ root: hashed });
    expect(await chooseRoot(me, existing({ 'klutch-bind-team-prod': labels(other), [hashed]: labels(other) }))).toEqual({
      taken: hashed,
      owner: 'AppClusterBinding x/y (uid x/y)',
    });
    expect(await chooseRoot(me, existing({ 'klutch-bind-team-prod': labels(me) }))).toEqual({ root: 'klutch-bind-team-prod' });
  });

  it('keeps a recorded name of its own, and ignores a recorded name that is not one of its names', async () => {
    const me = acb('team', 'prod', { rootNamespace: hashedRootNamespace(acb('team', 'prod')) });
    expect(await chooseRoot(me, existing({}))).toEqual({ root: hashedRootNamespace(me) });
    const victim = acb('team-a', 'prod');
    const forged = acb('team', 'a-prod', { rootNamespace: hashedRootNamespace(victim) });
    expect(await chooseRoot(forged, existing({ [hashedRootNamespace(victim)]: labels(victim) }))).toEqual({
      root: hashedRootNamespace(forged),
    });
  });
});
