/**
 * The real Compositions against the real function: every Composition synth writes, with every example claim made
 * into its composite, rendered by `crank render` (Development runtime → the bundled function on loopback), and the
 * composed resources — and the a8s objects inside provider-kubernetes Objects — validated by `crank beta validate`
 * against the providers' and a8s' CRDs. A second pass feeds Ready observed resources back and reads the composite.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Api } from '../../apis/api';
import { bundleDeployable, deployable } from '../../synth/deployables';
import { startFunctionProcess, type FunctionProcess } from '../support/function-process';
import { exampleClaim, render } from '../../synth/synth';
import { loadCatalog, parseYaml, ROOT } from '../support/catalog';
import { compositeOf } from '../support/function';
import { crankRender, crankValidate } from '../tools/crank';

type Obj = Record<string, any>;
// JSON documents: Go's YAML 1.1 reader would turn an unquoted `on` written by a YAML 1.2 writer into true.
const yaml = (objs: unknown[]) => objs.map((o) => `---\n${JSON.stringify(o)}\n`).join('');
const RESOURCE_NAME = 'crossplane.io/composition-resource-name';

const tmp = mkdtempSync(join(tmpdir(), 'klutch-render-'));
let fp: FunctionProcess;
let apis: Api[];
let files: Map<string, string>;

interface Case {
  readonly id: string;
  readonly api: Api;
  readonly backend: string;
  readonly composite: Obj;
  readonly composition: string;
}
const cases: Case[] = [];

/** What an a8s operator writes on its object: running, still coming up, or given up with its error. */
function a8sStatus(state: 'running' | 'progress' | 'failed'): Obj {
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

function renderCase(c: Case, observed?: Obj[]): Obj[] {
  return crankRender(inject('crank'), {
    composite: c.composite,
    composition: c.composition,
    functionPort: fp.port,
    observed,
    dir: join(tmp, `${c.id}${observed ? '-observed' : ''}`),
  }) as Obj[];
}

beforeAll(async () => {
  apis = await loadCatalog();
  files = render({ apis, outdir: 'unused' });
  const bundle = await bundleDeployable(ROOT, deployable('function'));
  fp = await startFunctionProcess(bundle, ['--metrics-address', '']);
  for (const api of apis) {
    for (const backend of api.backendNames) {
      const path = [...files.keys()].find((p) => p.endsWith(`/apis/${api.name}/composition-${backend}.yaml`));
      if (!path) throw new Error(`synth wrote no composition for ${api.name} ${backend}`);
      const claim = exampleClaim(api, backend, 'v1') as Obj;
      claim.metadata = { ...(claim.metadata ?? {}), namespace: claim.metadata?.namespace ?? 'team-a' };
      cases.push({
        id: `${backend}-${api.name}`,
        api,
        backend,
        composite: compositeOf(api, backend, claim.spec as Obj, {
          name: claim.metadata.name as string,
          namespace: claim.metadata.namespace as string,
        }),
        composition: files.get(path) as string,
      });
    }
  }
}, 300_000);

afterAll(async () => {
  await fp?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

describe('crank render with the bundled function', () => {
  const rendered = new Map<string, Obj[]>();

  it('renders every Composition with its example claim, without Fatal results', () => {
    expect(cases.length).toBeGreaterThanOrEqual(15);
    const problems: string[] = [];
    for (const c of cases) {
      const out = renderCase(c);
      rendered.set(c.id, out);
      const results = out.filter((d) => d.kind === 'Result' && d.severity === 'SEVERITY_FATAL');
      if (results.length) problems.push(`${c.id}: ${results.map((r) => r.message).join('; ')}`);
      const composed = out.filter((d) => d.metadata?.annotations?.[RESOURCE_NAME]);
      if (composed.length !== 1) problems.push(`${c.id}: ${composed.length} composed resources`);
    }
    expect(problems).toEqual([]);
  });

  it('every composed resource, and every a8s object inside an Object, is valid against the provider and a8s CRDs', () => {
    const resources: Obj[] = [];
    for (const [id, out] of rendered) {
      for (const d of out.filter((x) => x.metadata?.annotations?.[RESOURCE_NAME])) {
        resources.push(d);
        const manifest = d.spec?.forProvider?.manifest;
        if (d.kind === 'Object' && manifest)
          resources.push({ ...manifest, metadata: { ...manifest.metadata, name: manifest.metadata?.name ?? id } });
      }
    }
    expect(resources.filter((r) => r.kind === 'Object').length).toBe(cases.filter((c) => c.backend === 'a8s').length);
    const res = join(tmp, 'rendered.yaml');
    writeFileSync(res, yaml(resources));
    // One extensions file: this crank takes a single file or directory.
    const ext = join(tmp, 'extensions.yaml');
    writeFileSync(
      ext,
      ['provider-anynines', 'provider-kubernetes', 'a8s']
        .flatMap((d) =>
          readdirSync(join(ROOT, 'schemas', d))
            .filter((f) => f.endsWith('.yaml'))
            .sort()
            .map((f) => readFileSync(join(ROOT, 'schemas', d, f), 'utf8')),
        )
        .map((t) => (t.startsWith('---') ? t : `---\n${t}`))
        .join('\n'),
    );
    const v = crankValidate(inject('crank'), ext, res);
    expect(
      v.stdout.split('\n').filter((l) => l.startsWith('[x]') || l.startsWith('[!]')),
      v.stdout + v.stderr,
    ).toEqual([]);
    expect(v.status, v.stdout + v.stderr).toBe(0);
    expect(v.stdout).toContain(
      `Total ${resources.length} resources: 0 missing schemas, ${resources.length} success cases, 0 failure cases`,
    );

    // The control: the same check fails on a wrong type inside a rendered MR and inside a wrapped a8s object.
    const mr = structuredClone(resources.find((r) => r.kind === 'ServiceInstance')) as Obj;
    mr.spec.forProvider.planName = 42;
    const pg = structuredClone(resources.find((r) => r.kind === 'Postgresql')) as Obj;
    pg.spec.replicas = 'three';
    writeFileSync(join(tmp, 'broken.yaml'), yaml([mr, pg]));
    const bad = crankValidate(inject('crank'), ext, join(tmp, 'broken.yaml'));
    expect(bad.stdout).toContain('2 failure cases');
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
            ? { atProvider: Object.fromEntries(a9sFields(c).map((f) => [f, `observed-${f}`])), conditions }
            : { atProvider: { manifest: { status: a8sStatus('running') } }, conditions },
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
          ? { atProvider: { state }, conditions }
          : { atProvider: { manifest: { status: a8sStatus(state === 'failed' ? 'failed' : 'progress') } }, conditions },
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
      if (conds.some((x) => x.type === 'DataServiceReady')) problems.push(`${c.id}: DataServiceReady set while provisioning`);
      if (out.some((d) => d.kind === 'Result'))
        problems.push(`${c.id}: results while provisioning: ${JSON.stringify(out.filter((d) => d.kind === 'Result'))}`);
    }
    expect(problems).toEqual([]);
  });

  it('v2 target: a namespaced composite with hostile claim labels composes into its own namespace only', () => {
    // On Crossplane v2 the developer writes the XR and its labels; crossplane.io/claim-* must not steer the function.
    const v2 = render({ apis, outdir: 'unused', target: 'v2' });
    const problems: string[] = [];
    for (const backend of ['a9s', 'a8s'] as const) {
      const api = apis.find((a) => a.name === 'servicebinding') as Api;
      const composition = v2.get(`packages/dataservices/apis/servicebinding/composition-${backend}.yaml`) as string;
      const example = exampleClaim(api, backend, 'v2') as Obj;
      const composite = {
        ...example,
        metadata: {
          name: 'app-binding',
          namespace: 'team-b',
          labels: { 'crossplane.io/claim-name': 'their-binding', 'crossplane.io/claim-namespace': 'victim' },
        },
      };
      const out = crankRender(inject('crank'), { composite, composition, functionPort: fp.port, dir: join(tmp, `v2-${backend}`) }) as Obj[];
      const fatal = out.filter((d) => d.kind === 'Result' && d.severity === 'SEVERITY_FATAL');
      if (fatal.length) problems.push(`${backend}: ${JSON.stringify(fatal)}`);
      const composed = out.filter((d) => d.metadata?.annotations?.[RESOURCE_NAME]);
      if (composed.length !== 1) problems.push(`${backend}: ${composed.length} composed resources`);
      const text = JSON.stringify(composed);
      if (/victim|their-binding/.test(text)) problems.push(`${backend}: the hostile labels reached ${text}`);
      const secret = composed[0]?.spec?.writeConnectionSecretToRef;
      if (secret?.namespace !== 'team-b' || secret?.name !== 'app-binding-creds')
        problems.push(`${backend}: connection Secret ${JSON.stringify(secret)}`);
      const manifest = composed[0]?.spec?.forProvider?.manifest;
      if (backend === 'a8s' && (manifest?.metadata?.namespace !== 'team-b' || manifest?.spec?.instance?.namespace !== 'team-b'))
        problems.push(`a8s: the binding or its instance is outside team-b: ${JSON.stringify(manifest)}`);
    }
    expect(problems).toEqual([]);
  });

  it('when the backend fails, composite (and claim) get a False condition with the backend message', () => {
    const problems: string[] = [];
    for (const c of cases) {
      const out = renderCase(
        c,
        observedWith(c, 'failed', [
          { type: 'Ready', status: 'False', reason: 'Unavailable', message: 'broker: out of capacity', lastTransitionTime: at },
          { type: 'Synced', status: 'True', reason: 'ReconcileSuccess', lastTransitionTime: at },
        ]),
      );
      const xr = out.find((d) => d.kind === c.composite.kind) as Obj;
      const own = (xr?.status?.conditions ?? []).find((x: Obj) => x.type === 'DataServiceReady');
      if (own?.status !== 'False' || own?.reason !== 'ProvisioningFailed' || !String(own?.message).endsWith(': out of capacity')) {
        problems.push(`${c.id}: DataServiceReady is ${JSON.stringify(own)}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
