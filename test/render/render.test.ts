/**
 * The real Compositions against the real function: every Composition synth writes, for both targets, rendered by
 * `crank render` (Development runtime → the bundled function on loopback) of the matching Crossplane line — on `v1`
 * (crank v1.20) every example claim made into its composite, on `v2` (crank v2) every example namespaced XR,
 * defaulted from its XRD — and the composed resources, and the a8s objects inside provider-kubernetes Objects,
 * validated by `crank beta validate` of that line against the providers' and a8s' CRDs. Later passes feed observed
 * resources back (Ready, provisioning, failed) and read the composite.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Api, CrossplaneTarget } from '../../apis/api';
import type { Backend, Companion, Recipe } from '../../recipe';
import { bundleDeployable, deployable } from '../../synth/deployables';
import { startFunctionProcess, type FunctionProcess } from '../../harness/parts/function-process';
import { exampleClaim, PACKAGE_DIR, render } from '../../synth/synth';
import { loadCatalog, parseYaml, ROOT } from '../../harness/crossplane/catalog';
import { compositeOf, uidOf } from '../../harness/crossplane/function-requests';
import { crankRender, crankValidate, type CrankLine } from '../../harness/tools/crank';
import { CNPG_REAPER_ROLE, CNPG_ROLE_COMMENT } from '../../backends/cnpg';

type Obj = Record<string, any>;
// JSON documents: Go's YAML 1.1 reader would turn an unquoted `on` written by a YAML 1.2 writer into true.
const yaml = (objs: unknown[]) => objs.map((o) => `---\n${JSON.stringify(o)}\n`).join('');
const RESOURCE_NAME = 'crossplane.io/composition-resource-name';

const tmp = mkdtempSync(join(tmpdir(), 'klutch-render-'));
let fp: FunctionProcess;
let apis: Api[];
const TARGETS: readonly CrossplaneTarget[] = ['v1', 'v2'];
/** The crank of each target: v1.20 for the claims package, v2 for the namespaced XRs. */
const bin = (target: CrossplaneTarget) => inject(target === 'v1' ? 'crank' : 'crankV2');

interface Case {
  readonly id: string;
  readonly target: CrossplaneTarget;
  readonly api: Api;
  readonly backend: string;
  readonly composite: Obj;
  readonly composition: string;
  /** The XRD (v2: crank defaults the composite from it). */
  readonly xrd?: string;
}
const cases: Case[] = [];
/** The provider and a8s CRD folders under schemas/ the composed resources are validated against. */
const SCHEMA_DIRS = ['provider-anynines', 'provider-kubernetes', 'a8s', 'cloudnative-pg'] as const;
const schemaTexts = (dir: string) =>
  readdirSync(join(ROOT, 'schemas', dir))
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => readFileSync(join(ROOT, 'schemas', dir, f), 'utf8'));

/**
 * What an a8s operator writes on its object: running, still coming up, or given up with its error. A CloudNativePG
 * Cluster says where it is in its phase and the phase's reason; a CNPG Backup its phase, and its error once failed.
 */
function a8sStatus(state: 'running' | 'progress' | 'failed', backend?: string, api?: string): Obj {
  if (backend === 'cnpg' && api === 'backup')
    return { running: { phase: 'completed' }, progress: { phase: 'running' }, failed: { phase: 'failed', error: 'out of capacity' } }[
      state
    ];
  if (backend === 'cnpg' && state === 'running') return { phase: 'Cluster in healthy state', readyInstances: 1 };
  if (backend === 'cnpg' && state === 'progress') return { phase: 'Setting up primary', phaseReason: 'Creating primary instance x-1' };
  if (backend === 'cnpg') return { phase: 'Unable to create required cluster objects', phaseReason: 'out of capacity' };
  if (state === 'running') return { clusterStatus: 'Running' };
  return state === 'progress' ? { clusterStatus: 'NotRunning' } : { clusterStatus: 'NotRunning', error: 'out of capacity' };
}

/** The provider-anynines `status.atProvider.<f>` fields the recipe copies to `status.managed.<f>`. */
function a9sFields(c: Case): string[] {
  return (c.api.backends[c.backend]?.status ?? []).flatMap((m) => {
    const f = /^status\.atProvider\.(\w+)$/.exec(m.from)?.[1];
    return f && m.to === `status.managed.${f}` ? [f] : [];
  });
}

/**
 * The observed status of an a9s case's composed resource: provider-anynines' MR itself (v1), or on v2 the namespaced
 * Object holding it — the MR's status inside `atProvider.manifest`, the Object's conditions beside it.
 */
function a9sObserved(c: Case, atProvider: Obj, conditions: Obj[]): Obj {
  const mr = { atProvider, conditions };
  return c.target === 'v1' ? mr : { atProvider: { manifest: { status: mr } }, conditions };
}

/**
 * The object a case's recipe waits for (Recipe.waitsFor), ready: the cnpg Backup's instance Cluster archiving. It sits
 * where the claim is (v1: the claim's namespace; v2: the composite's own) with the labels from the composite's fields.
 */
function waitedFor(c: Case): Obj[] {
  const recipe = c.api.backends[c.backend as Backend] as Recipe;
  const w = (c.target === 'v2' ? recipe.v2?.waitsFor : undefined) ?? recipe.waitsFor;
  if (!w) return [];
  const meta = c.composite.metadata as { namespace?: string; labels?: Record<string, string> };
  const namespace = meta.namespace ?? meta.labels?.['crossplane.io/claim-namespace'];
  const spec = c.composite.spec as Obj;
  const labels = Object.fromEntries(w.labels.map((l) => [l.key, String(spec[l.from.replace(/^spec\./, '')])]));
  return [
    {
      apiVersion: w.apiVersion,
      kind: w.kind,
      metadata: { name: Object.values(labels).join('-'), namespace, labels },
      status: { conditions: [{ type: w.condition, status: 'True' }] },
    },
  ];
}

function renderCase(c: Case, observed?: Obj[], extraResources: Obj[] = waitedFor(c)): Obj[] {
  return crankRender(bin(c.target), {
    composite: c.composite,
    composition: c.composition,
    functionPort: fp.port,
    observed,
    xrd: c.xrd,
    ...(extraResources.length ? { extraResources } : {}),
    dir: join(tmp, `${c.id}${observed ? '-observed' : ''}${extraResources.length ? '' : '-waiting'}`),
  }) as Obj[];
}

beforeAll(async () => {
  apis = await loadCatalog();
  const bundle = await bundleDeployable(ROOT, deployable('function'));
  fp = await startFunctionProcess(bundle, ['--metrics-address', '']);
  for (const target of TARGETS) {
    const files = render({ apis, outdir: 'unused', target });
    for (const api of apis) {
      for (const backend of api.backendNames) {
        // v2: the API's one selection Composition, which composes on the backend the example names.
        const path = `${PACKAGE_DIR}/apis/${api.name}/${target === 'v1' ? `composition-${backend}` : 'composition'}.yaml`;
        const composition = files.get(path);
        if (!composition) throw new Error(`synth wrote no ${path} for the ${target} target`);
        const example = exampleClaim(api, backend, target) as Obj;
        const { name, namespace } = example.metadata as { name: string; namespace: string };
        // v1: the composite Crossplane makes of the example claim; v2: the example is the namespaced XR itself.
        const composite = target === 'v1' ? compositeOf(api, backend, example.spec as Obj, { name, namespace }) : example;
        // The API server gives every object its UID (crank does not); the cnpg binding names its role after it.
        (composite.metadata as Obj).uid ??= uidOf(`${target}-${name}`);
        cases.push({
          id: `${target}-${backend}-${api.name}`,
          target,
          api,
          backend,
          composite,
          composition,
          xrd: target === 'v2' ? files.get(`${PACKAGE_DIR}/apis/${api.name}/definition.yaml`) : undefined,
        });
      }
    }
  }
}, 300_000);

afterAll(async () => {
  await fp?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

/**
 * The companions a new composite has: one with `when` waits for its item (the cnpg reaper's Pod: a revoked role), a
 * rotation's second slot for the first rotation.
 */
const freshCompanions = (cs: readonly Companion[] | undefined, r: Recipe): readonly Companion[] =>
  (cs ?? []).filter((c) => !c.when && c.name !== r.rotation?.second);

describe('crank render with the bundled function', () => {
  const rendered = new Map<string, Obj[]>();

  it('renders every Composition of both targets with its example, without Fatal results', () => {
    for (const t of TARGETS) expect(cases.filter((c) => c.target === t).length, t).toBeGreaterThanOrEqual(15);
    const problems: string[] = [];
    for (const c of cases) {
      const out = renderCase(c);
      rendered.set(c.id, out);
      const results = out.filter((d) => d.kind === 'Result' && d.severity === 'SEVERITY_FATAL');
      if (results.length) problems.push(`${c.id}: ${results.map((r) => r.message).join('; ')}`);
      // The recipe's resource and its companions of a new composite (the cnpg instance's NetworkPolicy).
      const recipe = c.api.backends[c.backend as Backend] as Recipe;
      const companions = freshCompanions((c.target === 'v2' ? recipe.v2?.companions : undefined) ?? recipe.companions, recipe);
      const composed = out.filter((d) => d.metadata?.annotations?.[RESOURCE_NAME]);
      if (composed.length !== 1 + companions.length) problems.push(`${c.id}: ${composed.length} composed resources`);
    }
    expect(problems).toEqual([]);
  });

  it("composes a cnpg Backup only once its instance's Cluster archives, and says why it waits before", () => {
    const backups = cases.filter((c) => c.backend === 'cnpg' && c.api.name === 'backup');
    expect(backups.map((c) => c.target)).toEqual([...TARGETS]);
    for (const c of backups) {
      // Crossplane's loop as crank runs it: the function asks for the Cluster and none archives (none is there).
      const out = renderCase(c, undefined, []);
      expect(
        out.filter((d) => d.metadata?.annotations?.[RESOURCE_NAME]),
        c.id,
      ).toEqual([]);
      const xr = out.find((d) => d.kind === c.composite.kind) as Obj;
      const said = ((xr?.status?.conditions ?? []) as Obj[]).find((x) => x.type === 'DataServiceReady');
      expect(said, c.id).toMatchObject({ status: 'False', reason: 'Provisioning' });
      expect(String(said?.message), c.id).toMatch(/^cnpg backup: waiting for Cluster \S+ to archive its WAL: there is no Cluster/);
    }
  });

  /** The composed resources of a target's cases, and the a8s objects inside their Objects. */
  function composedOf(target: CrossplaneTarget): Obj[] {
    const resources: Obj[] = [];
    for (const c of cases.filter((x) => x.target === target)) {
      for (const d of (rendered.get(c.id) ?? []).filter((x) => x.metadata?.annotations?.[RESOURCE_NAME])) {
        resources.push(d);
        const manifest = d.spec?.forProvider?.manifest;
        // A built-in object inside an Object (the cnpg binding's Secret, an instance's NetworkPolicy and reaper) has no CRD to
        // check it against; the API server checks it in test/cluster/cnpg.test.ts.
        const builtIn = manifest && (['v1', 'apps/v1'].includes(manifest.apiVersion) || String(manifest.apiVersion).includes('.k8s.io/'));
        // One only observed (a cnpg Restore's view of its instance's Cluster) names the object and creates nothing.
        const observes = JSON.stringify(d.spec?.managementPolicies) === '["Observe"]';
        if (d.kind === 'Object' && manifest && !builtIn && !observes)
          resources.push({ ...manifest, metadata: { ...manifest.metadata, name: manifest.metadata?.name ?? c.id } });
      }
    }
    return resources;
  }

  /** `crank beta validate` of a target's line: the resources against the provider and a8s CRDs (one file: v1.20 takes one). */
  function validate(line: CrankLine, name: string, resources: Obj[]) {
    const ext = join(tmp, 'extensions.yaml');
    writeFileSync(
      ext,
      SCHEMA_DIRS.flatMap(schemaTexts)
        .map((t) => (t.startsWith('---') ? t : `---\n${t}`))
        .join('\n'),
    );
    const res = join(tmp, `${name}.yaml`);
    writeFileSync(res, yaml(resources));
    return crankValidate(bin(line), ext, res, line);
  }

  for (const target of TARGETS) {
    it(`${target}: every composed resource, and every a8s object inside an Object, is valid against the provider and a8s CRDs`, () => {
      const resources = composedOf(target);
      // On v2 every backend's resource is in a namespaced Object (provider-anynines' cluster-scoped MRs too).
      const a8s = cases
        .filter((c) => c.target === target && (c.backend !== 'a9s' || target === 'v2'))
        .map((c) => {
          const recipe = c.api.backends[c.backend as Backend] as Recipe;
          return 1 + freshCompanions(recipe.companions, recipe).length;
        })
        .reduce((a, b) => a + b, 0);
      const wrapper = target === 'v1' ? 'kubernetes.crossplane.io/v1alpha2' : 'kubernetes.m.crossplane.io/v1alpha1';
      expect(resources.filter((r) => r.kind === 'Object' && r.apiVersion === wrapper).length).toBe(a8s);
      // The control, in the same crank call (each call compiles every CRD's schema again): the check fails on a wrong
      // type inside a rendered MR and inside a wrapped a8s object, and on nothing else.
      const mr = structuredClone(resources.find((r) => r.kind === 'ServiceInstance')) as Obj;
      mr.metadata = { ...mr.metadata, name: 'broken-control-mr' };
      mr.spec.forProvider.planName = 42;
      const pg = structuredClone(resources.find((r) => r.kind === 'Postgresql')) as Obj;
      pg.metadata = { ...pg.metadata, name: 'broken-control-pg' };
      pg.spec.replicas = 'three';
      const v = validate(target, `rendered-${target}`, [...resources, mr, pg]);
      const refused = v.stdout.split('\n').filter((l) => l.startsWith('[x]') || l.startsWith('[!]'));
      expect(
        refused.filter((l) => !/, broken-control-(mr|pg) :/.test(l)),
        v.stdout + v.stderr,
      ).toEqual([]);
      expect(new Set(refused.map((l) => /, (broken-control-(mr|pg)) :/.exec(l)?.[1])), v.stdout).toEqual(
        new Set(['broken-control-mr', 'broken-control-pg']),
      );
      expect(v.stdout).toContain(
        `Total ${resources.length + 2} resources: 0 missing schemas, ${resources.length} success cases, 2 failure cases`,
      );
    });
  }

  it('v2: a namespaced Object takes a providerConfigRef with its kind and a connection Secret reference without a namespace', () => {
    // What the v2 target composed before it had a namespaced wrapper of its own: both are schema errors there.
    const binding = composedOf('v2').find((r) => r.kind === 'Object' && r.spec?.writeConnectionSecretToRef) as Obj;
    expect(binding.spec.providerConfigRef).toEqual({ name: 'kubernetes-provider', kind: 'ClusterProviderConfig' });
    expect(Object.keys(binding.spec.writeConnectionSecretToRef)).toEqual(['name']);
    const legacy = structuredClone(binding);
    legacy.spec.providerConfigRef = { name: 'kubernetes-provider' };
    legacy.spec.writeConnectionSecretToRef.namespace = 'default';
    const v = validate('v2', 'legacy-refs', [legacy]);
    expect(v.stdout).toMatch(/providerConfigRef\.kind: Required value/);
    expect(v.stdout).toMatch(/writeConnectionSecretToRef\.namespace: .*unknown field/i);
  });

  it('v2: every composite composes only namespaced resources; a9s MRs, cluster-scoped, inside namespaced Objects', () => {
    // Crossplane v2 core refuses a cluster-scoped composed resource of a namespaced composite: "cannot apply cluster
    // scoped composed resource ... for a namespaced composite resource". crank render does not check it; the CRDs say.
    const scope = new Map<string, { scope: string; dir: string }>();
    for (const dir of SCHEMA_DIRS) {
      for (const crd of schemaTexts(dir).flatMap(parseYaml) as Obj[]) {
        for (const v of crd.spec.versions as Obj[])
          scope.set(`${crd.spec.group}/${v.name} ${crd.spec.names.kind}`, { scope: crd.spec.scope, dir });
      }
    }
    const clusterScoped = new Set<string>();
    const wrapped = new Set<string>();
    for (const c of cases.filter((x) => x.target === 'v2')) {
      for (const d of (rendered.get(c.id) ?? []).filter((x) => x.metadata?.annotations?.[RESOURCE_NAME])) {
        const s = scope.get(`${d.apiVersion} ${d.kind}`);
        if (s?.scope !== 'Namespaced') clusterScoped.add(`${c.backend}: ${d.apiVersion} ${d.kind} (${s?.scope ?? 'no CRD'})`);
        const m = d.spec?.forProvider?.manifest as Obj | undefined;
        // A cluster-scoped object inside is named after the composite's namespace and name, and has no namespace.
        if (m && scope.get(`${m.apiVersion} ${m.kind}`)?.scope === 'Cluster') {
          wrapped.add(`${c.backend}: ${m.apiVersion} ${m.kind}`);
          const { name, namespace } = c.composite.metadata as Obj;
          if (m.metadata?.name !== `${namespace}.${name}` || m.metadata?.namespace !== undefined)
            clusterScoped.add(`${c.id}: the cluster-scoped ${m.kind} inside is ${JSON.stringify(m.metadata)}`);
        }
      }
    }
    expect([...clusterScoped].sort()).toEqual([]);
    expect([...wrapped].sort()).toEqual([
      'a9s: dataservices.anynines.com/v1 Backup',
      'a9s: dataservices.anynines.com/v1 Restore',
      'a9s: dataservices.anynines.com/v1 ServiceBinding',
      'a9s: dataservices.anynines.com/v1 ServiceInstance',
    ]);
    // provider-anynines has no namespaced kind that could be composed directly instead.
    expect([...scope.values()].filter((s) => s.dir === 'provider-anynines' && s.scope === 'Namespaced')).toEqual([]);
  });

  it('with Ready observed resources, the composite gets the backend status and becomes Ready', () => {
    const problems: string[] = [];
    for (const c of cases) {
      const composed = (rendered.get(c.id) ?? []).filter((d) => d.metadata?.annotations?.[RESOURCE_NAME]);
      const conditions = [
        { type: 'Ready', status: 'True', reason: 'Available', lastTransitionTime: '2026-01-01T00:00:00Z' },
        { type: 'Synced', status: 'True', reason: 'ReconcileSuccess', lastTransitionTime: '2026-01-01T00:00:00Z' },
      ];
      const observed = composed.map((d, i) => ({
        ...d,
        metadata: { ...d.metadata, name: d.metadata.name ?? `${c.id}-${i}` },
        status:
          c.backend === 'a9s'
            ? a9sObserved(c, Object.fromEntries(a9sFields(c).map((f) => [f, `observed-${f}`])), conditions)
            : { atProvider: { manifest: { status: a8sStatus('running', c.backend, c.api.name) } }, conditions },
      }));
      const out = renderCase(c, observed);
      const xr = out.find((d) => d.kind === c.composite.kind) as Obj;
      const ready = (xr?.status?.conditions ?? []).find((x: Obj) => x.type === 'Ready');
      if (ready?.status !== 'True') problems.push(`${c.id}: composite Ready is ${JSON.stringify(ready)}`);
      const managed = xr?.status?.managed ?? {};
      for (const f of c.backend === 'a9s' ? a9sFields(c) : []) {
        if (managed[f] !== `observed-${f}`) problems.push(`${c.id}: status.managed.${f} is ${JSON.stringify(managed[f])}`);
      }
      if (c.backend === 'a9s' && a9sFields(c).length === 0) problems.push(`${c.id}: the recipe maps no status.atProvider field`);
      if (c.backend === 'a8s' && managed.clusterStatus !== 'Running')
        problems.push(`${c.id}: status.managed.clusterStatus is ${JSON.stringify(managed.clusterStatus)}`);
      if ((managed.conditions ?? []).length !== 2)
        problems.push(`${c.id}: status.managed.conditions has ${(managed.conditions ?? []).length}`);
      const own = (xr?.status?.conditions ?? []).find((x: Obj) => x.type === 'DataServiceReady');
      if (own?.status !== 'True') problems.push(`${c.id}: DataServiceReady is ${JSON.stringify(own)}`);
    }
    expect(problems).toEqual([]);
  });

  /**
   * Observed copies of a case's rendered resources with the given conditions and backend state: provider-anynines'
   * `atProvider.state` (a9s); for a8s what the operators write (`clusterStatus`, and `error` when they give up).
   */
  function observedWith(c: Case, state: 'in progress' | 'failed', conditions: Obj[]): Obj[] {
    const composed = (rendered.get(c.id) ?? []).filter((d) => d.metadata?.annotations?.[RESOURCE_NAME]);
    return composed.map((d, i) => ({
      ...d,
      metadata: { ...d.metadata, name: d.metadata.name ?? `${c.id}-${i}` },
      status:
        c.backend === 'a9s'
          ? a9sObserved(c, { state }, conditions)
          : {
              atProvider: { manifest: { status: a8sStatus(state === 'failed' ? 'failed' : 'progress', c.backend, c.api.name) } },
              conditions,
            },
    }));
  }
  const at = '2026-01-01T00:00:00Z';

  it('while the backend provisions, the composite carries its state, is not Ready, and has no failure', () => {
    const problems: string[] = [];
    for (const c of cases) {
      const out = renderCase(
        c,
        observedWith(c, 'in progress', [
          { type: 'Ready', status: 'False', reason: 'Creating', lastTransitionTime: at },
          { type: 'Synced', status: 'True', reason: 'ReconcileSuccess', lastTransitionTime: at },
        ]),
      );
      const xr = out.find((d) => d.kind === c.composite.kind) as Obj;
      const conds: Obj[] = xr?.status?.conditions ?? [];
      const ready = conds.find((x) => x.type === 'Ready');
      if (ready?.status === 'True') problems.push(`${c.id}: composite Ready while provisioning`);
      const managed = xr?.status?.managed ?? {};
      // a9s Backup/Restore report `status`, not `state`: their recipes do not map atProvider.state.
      const mapsState = c.backend === 'a8s' || a9sFields(c).includes('state');
      const state = c.backend === 'a9s' ? managed.state : managed.clusterStatus;
      const want = c.backend === 'a9s' ? 'in progress' : 'NotRunning';
      if (mapsState && state !== want) problems.push(`${c.id}: status.managed state is ${JSON.stringify(state)}`);
      // A backend that says what it is doing (CNPG's phase and its reason) has that on the claim; the others nothing.
      const progress = conds.find((x) => x.type === 'DataServiceReady');
      const says = c.api.backends[c.backend]?.progressPaths && managed.phase;
      const saying = c.api.name === 'backup' ? ': running' : ': Setting up primary: Creating primary instance x-1';
      if (says && (progress?.status !== 'False' || progress?.reason !== 'Provisioning' || !String(progress?.message).endsWith(saying)))
        problems.push(`${c.id}: DataServiceReady while provisioning is ${JSON.stringify(progress)}`);
      if (!says && progress) problems.push(`${c.id}: DataServiceReady set while provisioning`);
      if (out.some((d) => d.kind === 'Result'))
        problems.push(`${c.id}: results while provisioning: ${JSON.stringify(out.filter((d) => d.kind === 'Result'))}`);
    }
    expect(problems).toEqual([]);
  });

  it('v2 target: a namespaced composite with hostile claim labels composes into its own namespace only', () => {
    // On Crossplane v2 the developer writes the XR and its labels; crossplane.io/claim-* must not steer the function.
    const v2 = render({ apis, outdir: 'unused', target: 'v2' });
    const problems: string[] = [];
    for (const backend of ['a9s', 'a8s', 'cnpg'] as const) {
      const api = apis.find((a) => a.name === 'servicebinding') as Api;
      const composition = v2.get(`packages/dataservices/apis/servicebinding/composition.yaml`) as string;
      const example = exampleClaim(api, backend, 'v2') as Obj;
      const composite = {
        ...example,
        metadata: {
          name: 'app-binding',
          namespace: 'team-b',
          uid: uidOf('team-b/app-binding'),
          labels: { 'crossplane.io/claim-name': 'their-binding', 'crossplane.io/claim-namespace': 'victim' },
        },
      };
      const out = crankRender(bin('v2'), { composite, composition, functionPort: fp.port, dir: join(tmp, `v2-${backend}`) }) as Obj[];
      const fatal = out.filter((d) => d.kind === 'Result' && d.severity === 'SEVERITY_FATAL');
      if (fatal.length) problems.push(`${backend}: ${JSON.stringify(fatal)}`);
      const composed = out.filter((d) => d.metadata?.annotations?.[RESOURCE_NAME]);
      if (composed.length !== 1) problems.push(`${backend}: ${composed.length} composed resources`);
      // Crossplane v2 itself copies the XR's crossplane.io/claim-* labels onto what it composes (in the XR's own
      // namespace; nothing reads them there): only the names, namespaces and references the function writes count.
      const text = JSON.stringify(composed.map((d) => ({ ...d, metadata: { ...d.metadata, labels: undefined } })));
      if (/victim|their-binding/.test(text)) problems.push(`${backend}: the hostile labels reached ${text}`);
      // a9s: the cluster-scoped MR inside the Object names the namespace; a8s and cnpg: the namespaced Object writes
      // into its own, the composite's.
      const secret = (backend === 'a9s' ? composed[0]?.spec?.forProvider?.manifest : composed[0])?.spec?.writeConnectionSecretToRef;
      const want = backend === 'a9s' ? { name: 'app-binding-creds', namespace: 'team-b' } : { name: 'app-binding-creds' };
      if (JSON.stringify(secret) !== JSON.stringify(want)) problems.push(`${backend}: connection Secret ${JSON.stringify(secret)}`);
      const manifest = composed[0]?.spec?.forProvider?.manifest;
      if (backend === 'a8s' && (manifest?.metadata?.namespace !== 'team-b' || manifest?.spec?.instance?.namespace !== 'team-b'))
        problems.push(`a8s: the binding or its instance is outside team-b: ${JSON.stringify(manifest)}`);
      if (backend === 'cnpg' && manifest?.metadata?.namespace !== 'team-b')
        problems.push(`cnpg: the binding's Secret is outside team-b: ${JSON.stringify(manifest?.metadata)}`);
      // cnpg copies the instance's user and address: every reference reads in team-b.
      const refs: Obj[] = (composed[0]?.spec?.references ?? []).map((r: Obj) => r.patchesFrom ?? r.dependsOn);
      if (backend === 'cnpg' && (refs.length === 0 || refs.some((r) => r?.namespace !== 'team-b')))
        problems.push(`cnpg: references read outside team-b: ${JSON.stringify(refs)}`);
      const details: Obj[] = composed[0]?.spec?.connectionDetails ?? [];
      if (backend !== 'a9s' && (details.length === 0 || details.some((d) => d.namespace !== 'team-b')))
        problems.push(`${backend}: connection details read outside team-b: ${JSON.stringify(details)}`);
    }
    expect(problems).toEqual([]);
  });

  /**
   * cnpg per-binding users through crank render, on both targets: the instance's Cluster lists one role per cnpg
   * binding Crossplane finds for it (`-e`), only those of its own namespace (v2: whatever its labels say), a role
   * whose binding is gone stays listed as absent, and the result is valid against CNPG's CRD; the binding's Secret
   * gets a generated password that a later pass (its Object observed) keeps.
   */
  for (const target of TARGETS) {
    it(`${target}: a cnpg instance lists a role per binding of its own namespace, a gone one revoked; the binding's password is kept`, () => {
      const instance = cases.find((c) => c.id === `${target}-cnpg-postgresql`) as Case;
      const bindingCase = cases.find((c) => c.id === `${target}-cnpg-servicebinding`) as Case;
      // v2: a tenant's hostile labels on the namespaced instance must not widen whose bindings it sees.
      const composite = structuredClone(instance.composite);
      const own = target === 'v1' ? composite.metadata.labels['crossplane.io/claim-namespace'] : composite.metadata.namespace;
      const claim = target === 'v1' ? composite.metadata.labels['crossplane.io/claim-name'] : composite.metadata.name;
      if (target === 'v2') composite.metadata.labels = { 'crossplane.io/claim-name': claim, 'crossplane.io/claim-namespace': 'victim' };
      const binding = (name: string, namespace: string, spec: Obj = {}): Obj => {
        const b = structuredClone(bindingCase.composite);
        b.spec = { ...b.spec, instanceRef: claim, ...spec };
        b.metadata =
          target === 'v1'
            ? {
                ...b.metadata,
                name: `${name}-x1y2z`,
                labels: { 'crossplane.io/claim-name': name, 'crossplane.io/claim-namespace': namespace },
              }
            : { name, namespace, labels: b.metadata.labels };
        b.metadata.uid = uidOf(`${target}-${namespace}-${name}`);
        return b;
      };
      const mine = [binding('app', own), binding('app-2', own)];
      const theirs = [
        binding('app', 'victim'),
        binding('other-instance', own, { instanceRef: 'another' }),
        binding('a8s', own, { compositionRef: { name: 'a8s-servicebinding' } }),
      ];
      const run = (extraResources: Obj[], observed?: Obj[], dir = 'roles') =>
        crankRender(bin(target), {
          composite,
          composition: instance.composition,
          functionPort: fp.port,
          xrd: instance.xrd,
          extraResources,
          observed,
          dir: join(tmp, `${target}-${dir}`),
        }) as Obj[];
      const composedIn = (out: Obj[]) => out.find((d) => d.metadata?.annotations?.[RESOURCE_NAME]) as Obj;
      // The bindings' roles, after the platform's own (backends/cnpg.ts): the session reaper and the login group.
      const group = `klutch-login-${claim}`;
      const rolesOf = (out: Obj[]) => {
        const all = (composedIn(out).spec.forProvider.manifest.spec.managed?.roles ?? []) as Obj[];
        expect(all.slice(0, 2).map((r) => r.name)).toEqual([CNPG_REAPER_ROLE, group]);
        return all.slice(2);
      };
      const role = (b: Obj) => `binding-${target === 'v1' ? b.metadata.labels['crossplane.io/claim-name'] : b.metadata.name}`;

      const first = run([...mine, ...theirs]);
      expect(first.filter((d) => d.kind === 'Result' && d.severity === 'SEVERITY_FATAL')).toEqual([]);
      expect(rolesOf(first)).toEqual(
        mine
          .map((b) => ({
            name: role(b),
            comment: CNPG_ROLE_COMMENT,
            ensure: 'present',
            login: true,
            inRoles: ['app', group],
            passwordSecret: { name: `${target === 'v1' ? b.metadata.labels['crossplane.io/claim-name'] : b.metadata.name}-cnpg-binding` },
          }))
          .sort((a, b) => a.name.localeCompare(b.name)),
      );
      const cluster = composedIn(first).spec.forProvider.manifest;
      const v = validate(target, `roles-${target}`, [{ ...cluster, metadata: { ...cluster.metadata } }]);
      expect(v.stdout, v.stdout + v.stderr).toContain('0 failure cases');

      // app-2 is deleted: Crossplane no longer finds it; its role stays, revoked (NOLOGIN). Then none at all: both.
      const observed = [{ ...composedIn(first), metadata: { ...composedIn(first).metadata, name: 'pg-object' } }];
      const gone = run([mine[0] as Obj], observed, 'roles-gone');
      const second = rolesOf(gone);
      // The session reaper's Pod comes with the first revoked role (backends/cnpg.ts reaperDeployment).
      const reaperIn = (out: Obj[]) =>
        out
          .filter((d) => d.metadata?.annotations?.[RESOURCE_NAME] === 'cnpg-postgresql-session-reaper')
          .map((d) => d.spec.forProvider.manifest.kind);
      expect([reaperIn(first), reaperIn(gone)]).toEqual([[], ['Deployment']]);
      expect(second.map((r) => [r.name, r.login])).toEqual(
        [
          [role(mine[0] as Obj), true],
          [role(mine[1] as Obj), false],
        ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      );
      // CNPG's CRD takes the revoked entry as written.
      const revoked = { ...composedIn(first).spec.forProvider.manifest };
      revoked.spec = { ...revoked.spec, managed: { roles: second } };
      const rv = validate(target, `roles-revoked-${target}`, [revoked]);
      expect(rv.stdout, rv.stdout + rv.stderr).toContain('0 failure cases');
      expect(rolesOf(run([], observed, 'roles-none')).map((r) => r.login)).toEqual([false, false]);

      // The binding: its own user and a generated password, kept once its Object is observed.
      const secretOf = (out: Obj[]) => composedIn(out).spec.forProvider.manifest;
      const renderBinding = (observedBinding?: Obj[], dir = 'binding') =>
        crankRender(bin(target), {
          composite: mine[0] as Obj,
          composition: bindingCase.composition,
          functionPort: fp.port,
          xrd: bindingCase.xrd,
          observed: observedBinding,
          dir: join(tmp, `${target}-${dir}`),
        }) as Obj[];
      const b1 = renderBinding();
      expect(secretOf(b1).stringData).toMatchObject({
        username: role(mine[0] as Obj),
        password: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      });
      const b2 = renderBinding([{ ...composedIn(b1), metadata: { ...composedIn(b1).metadata, name: 'binding-object' } }], 'binding-again');
      expect(secretOf(b2).stringData.password).toBe(secretOf(b1).stringData.password);
      expect(secretOf(renderBinding(undefined, 'binding-fresh')).stringData.password).not.toBe(secretOf(b1).stringData.password);
      if (target === 'v2') {
        // The move from the v1 package: the v2 composite takes over the Secret the v1 one made, and keeps its password.
        const live = {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'app-cnpg-binding', namespace: own },
          data: { password: Buffer.from('from-the-v1-package').toString('base64') },
        };
        const taken = crankRender(bin(target), {
          composite: mine[0] as Obj,
          composition: bindingCase.composition,
          functionPort: fp.port,
          xrd: bindingCase.xrd,
          extraResources: [live],
          dir: join(tmp, `${target}-binding-taken-over`),
        }) as Obj[];
        expect(secretOf(taken).stringData).toMatchObject({ username: role(mine[0] as Obj), password: 'from-the-v1-package' });
      }
    });
  }

  /**
   * A cnpg instance whose initdb Pod cannot be scheduled (issue 20 item 5), through crank render on both targets: the
   * function asks for the Pods of its Cluster and says why after CNPG's phase; Pods of another namespace (crank, like
   * Crossplane v1.20, hands them over whatever the selector's namespace) or of another claim say nothing, whatever
   * labels a tenant put on a v2 composite.
   */
  for (const target of TARGETS) {
    it(`${target}: a cnpg instance whose Pod cannot be scheduled says why; another namespace's or claim's Pods say nothing`, () => {
      const c = cases.find((x) => x.id === `${target}-cnpg-postgresql`) as Case;
      const composite = structuredClone(c.composite);
      const own = target === 'v1' ? composite.metadata.labels['crossplane.io/claim-namespace'] : composite.metadata.namespace;
      const claim = target === 'v1' ? composite.metadata.labels['crossplane.io/claim-name'] : composite.metadata.name;
      if (target === 'v2')
        composite.metadata.labels = { 'crossplane.io/claim-name': 'victim-db', 'crossplane.io/claim-namespace': 'victim' };
      const unbound = "0/1 nodes are available: 1 node(s) didn't find available persistent volumes to bind.";
      const pod = (name: string, namespace: string, cluster: string, message: string): Obj => ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace, labels: { 'cnpg.io/cluster': cluster, 'cnpg.io/jobRole': 'initdb' } },
        status: { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message }] },
      });
      const theirs = [pod('a-initdb', 'victim', claim, 'victim namespace'), pod('b-initdb', own, 'victim-db', 'another claim')];
      const observed = observedWith(c, 'in progress', [
        { type: 'Ready', status: 'False', reason: 'Creating', lastTransitionTime: at },
        { type: 'Synced', status: 'True', reason: 'ReconcileSuccess', lastTransitionTime: at },
      ]);
      const said = (extraResources: Obj[], dir: string) => {
        const out = crankRender(bin(target), {
          composite,
          composition: c.composition,
          functionPort: fp.port,
          xrd: c.xrd,
          observed,
          extraResources,
          dir: join(tmp, `${target}-${dir}`),
        }) as Obj[];
        expect(out.filter((d) => d.kind === 'Result' && d.severity === 'SEVERITY_FATAL')).toEqual([]);
        const xr = out.find((d) => d.kind === composite.kind) as Obj;
        return (xr?.status?.conditions ?? []).find((x: Obj) => x.type === 'DataServiceReady') as Obj;
      };
      expect(said(theirs, 'unschedulable-theirs')).toMatchObject({
        status: 'False',
        reason: 'Provisioning',
        message: 'cnpg postgresql: Setting up primary: Creating primary instance x-1',
      });
      expect(said([...theirs, pod(`${claim}-1-initdb-x7k2p`, own, claim, unbound)], 'unschedulable')).toMatchObject({
        status: 'False',
        reason: 'Unschedulable',
        message: `cnpg postgresql: Setting up primary: Creating primary instance x-1; Pod ${claim}-1-initdb-x7k2p cannot be scheduled: ${unbound}`,
      });
    });
  }

  it('when the backend fails, composite (and claim) get a False condition with the backend message', () => {
    const problems: string[] = [];
    // The cnpg binding is a Secret provider-kubernetes fills: it has no state of its own to fail in.
    const reports = (c: Case) => Boolean(c.api.backends[c.backend]?.errorPaths ?? c.api.backends[c.backend]?.failedStatePaths);
    expect([...new Set(cases.filter((c) => !reports(c)).map((c) => c.backend))]).toEqual(['cnpg']);
    for (const c of cases.filter(reports)) {
      const out = renderCase(
        c,
        observedWith(c, 'failed', [
          { type: 'Ready', status: 'False', reason: 'Unavailable', message: 'broker: out of capacity', lastTransitionTime: at },
          { type: 'Synced', status: 'True', reason: 'ReconcileSuccess', lastTransitionTime: at },
        ]),
      );
      const xr = out.find((d) => d.kind === c.composite.kind) as Obj;
      const own = (xr?.status?.conditions ?? []).find((x: Obj) => x.type === 'DataServiceReady');
      // CNPG's phase, then its reason: "cnpg postgresql: Unable to create required cluster objects: out of capacity".
      if (own?.status !== 'False' || own?.reason !== 'ProvisioningFailed' || !String(own?.message).endsWith(': out of capacity')) {
        problems.push(`${c.id}: DataServiceReady is ${JSON.stringify(own)}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
