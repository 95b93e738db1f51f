/**
 * The Helm chart against the kustomize bundle it is made of: the real helm (`helm lint`, `helm template`) and the real
 * kustomize (`kubectl kustomize`) on the same synth output, for each knob, give the same objects — but for the
 * settings ConfigMap's name (kustomize hashes it into the name, Helm rolls the Pods by a checksum annotation).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadCatalog, parseYaml } from '../harness/crossplane/catalog';
import { ensureHelm } from '../harness/tools/helm';
import { ensureKubeBinary, KUBE_VERSION } from '../harness/tools/kube';
import { CHART_DIR } from './helm-chart';
import { BACKEND_SETTINGS } from './install-bundle';
import { synthesize } from './synth';

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  [k: string]: any;
};

let dir: string;
let helm: string;
let kube: string;
const chart = () => join(dir, 'dist', CHART_DIR);

function run(command: string, args: string[]): string {
  const r = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`${args.slice(0, 2).join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}
const helmTemplate = (...set: string[]) =>
  parseYaml(
    run(helm, ['template', 'klutch-kit', chart(), '--include-crds', '--kube-version', KUBE_VERSION, ...set.flatMap((s) => ['--set', s])]),
  ) as Obj[];
/** An overlay of the bundle with these components and kustomization fields, built by the real kustomize. */
function kustomize(name: string, components: string[], more: Record<string, unknown> = {}): Obj[] {
  const overlay = join(dir, name);
  mkdirSync(overlay, { recursive: true });
  const doc = { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: ['../dist/control-plane'], ...more };
  writeFileSync(
    join(overlay, 'kustomization.yaml'),
    stringify(components.length ? { ...doc, components: components.map((c) => `../dist/control-plane/${c}`) } : doc),
  );
  return parseYaml(run(kube, ['kubectl', 'kustomize', overlay])) as Obj[];
}
/** Objects by identity, the settings ConfigMap under its own name, Helm's checksum annotation taken out. */
function normalized(objs: Obj[]): Record<string, Obj> {
  const hashed = new RegExp(`^${BACKEND_SETTINGS}-[a-z0-9]{10}$`);
  const out: Record<string, Obj> = {};
  for (const o of structuredClone(objs)) {
    if (o.kind === 'ConfigMap' && hashed.test(o.metadata.name)) o.metadata.name = BACKEND_SETTINGS;
    if (o.kind === 'Deployment') {
      for (const c of o.spec.template.spec.containers)
        for (const e of c.envFrom ?? []) if (hashed.test(e.configMapRef?.name ?? '')) e.configMapRef.name = BACKEND_SETTINGS;
      delete o.spec.template.metadata.annotations?.['checksum/settings'];
      if (o.spec.template.metadata.annotations && !Object.keys(o.spec.template.metadata.annotations).length)
        delete o.spec.template.metadata.annotations;
    }
    out[`${o.apiVersion}/${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`] = o;
  }
  return out;
}
const backend = (objs: Obj[]) => objs.find((o) => o.kind === 'Deployment')!;

beforeAll(async () => {
  [helm, kube] = await Promise.all([ensureHelm(), ensureKubeBinary()]);
  dir = mkdtempSync(join(tmpdir(), 'klutch-kit-chart-'));
  synthesize({ apis: await loadCatalog(), outdir: join(dir, 'dist') });
}, 900_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('dist/charts/klutch-kit', () => {
  it('passes helm lint', () => {
    expect(run(helm, ['lint', chart()])).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  it('renders the bundle: the objects kubectl kustomize builds, ProviderConfigs once asked for, the CRDs from crds/', () => {
    const bundle = kustomize('plain', []);
    const crds = readdirSync(join(chart(), 'crds'));
    expect(crds.sort()).toEqual(
      bundle
        .filter((o) => o.kind === 'CustomResourceDefinition')
        .map((o) => `${o.metadata.name}.yaml`)
        .sort(),
    );
    expect(normalized(helmTemplate('providerConfigs.enabled=true'))).toEqual(normalized(bundle));
    const first = helmTemplate();
    expect(first.filter((o) => /ProviderConfig$/.test(o.kind))).toEqual([]);
    expect(Object.keys(normalized(first)).length).toBe(
      Object.keys(normalized(bundle)).length - bundle.filter((o) => /ProviderConfig$/.test(o.kind)).length,
    );
  });

  it('renders each Component where its value is on: monitoring, production, the private registry, the Ingress and the Gateway route, as an overlay adds them', () => {
    const withAll = kustomize('components', ['monitoring', 'production', 'private-registry', 'ingress', 'gateway']);
    const values = [
      'monitoring.enabled=true',
      'production.enabled=true',
      'privateRegistry.enabled=true',
      'ingress.enabled=true',
      'gateway.enabled=true',
      'providerConfigs.enabled=true',
    ];
    expect(normalized(helmTemplate(...values))).toEqual(normalized(withAll));
  });

  it("takes the backend's image, replicas and settings as an overlay sets them, and rolls the Pods when a setting changes", () => {
    const overlay = kustomize('knobs', [], {
      configMapGenerator: [
        {
          name: BACKEND_SETTINGS,
          namespace: 'klutch-bind-backend',
          behavior: 'merge',
          literals: ['BACKEND_OIDC_ISSUER_URL=https://login.acme.test/realms/platform'],
        },
      ],
      images: [{ name: 'ghcr.io/klutch-kit/bind-backend', newName: 'registry.acme.test/bind-backend', newTag: 'v0.2.0' }],
      replicas: [{ name: 'klutch-bind-backend', count: 3 }],
    });
    const set = [
      'backend.settings.BACKEND_OIDC_ISSUER_URL=https://login.acme.test/realms/platform',
      'backend.image.repository=registry.acme.test/bind-backend',
      'backend.image.tag=v0.2.0',
      'backend.replicas=3',
      'providerConfigs.enabled=true',
    ];
    const rendered = helmTemplate(...set);
    expect(normalized(rendered)).toEqual(normalized(overlay));
    const checksum = (objs: Obj[]) => backend(objs).spec.template.metadata.annotations['checksum/settings'];
    expect(checksum(rendered)).toMatch(/^[0-9a-f]{64}$/);
    expect(checksum(helmTemplate(...set.slice(1)))).not.toBe(checksum(rendered));
  });
});
