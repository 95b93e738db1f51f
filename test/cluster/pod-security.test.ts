/**
 * Pod security of every deployable synth writes, judged by the real API server's Pod Security admission (cluster
 * `a`): a Pod made of each Deployment's pod template — and of the function's DeploymentRuntimeConfig — is accepted
 * by a server-side dry run in a namespace that enforces `restricted`; the same Pod without its securityContext is
 * refused, which shows the admission is on and judging.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { render } from '../../synth/synth';
import { loadCatalog, objectFiles, parseYaml } from '../../harness/crossplane/catalog';
import { admin, testNamespace } from '../support/cluster';
import { requireOk, type Kube } from '../../harness/cluster/kube';

type Obj = Record<string, any>;

/** Pod templates of what synth ships: each Deployment's, and the runtime Pod Crossplane makes for the function. */
function podTemplates(files: Map<string, string>): { name: string; spec: Obj }[] {
  const objs = [...files.values()].flatMap((t) => parseYaml(t)) as Obj[];
  const out = objs
    .filter((o) => o.kind === 'Deployment')
    .map((d) => ({ name: `Deployment ${d.metadata.namespace}/${d.metadata.name}`, spec: d.spec.template.spec as Obj }));
  for (const c of objs.filter((o) => o.kind === 'DeploymentRuntimeConfig')) {
    const spec = structuredClone(c.spec.deploymentTemplate.spec.template.spec) as Obj;
    // Crossplane fills in the image (and ports, TLS volumes); the security settings are the config's.
    spec.containers = spec.containers.map((x: Obj) => ({ ...x, image: 'xpkg.example.com/klutch-kit/function-dataservices:v0.1.0' }));
    out.push({ name: `DeploymentRuntimeConfig ${c.metadata.name}`, spec });
  }
  return out;
}

/** The Pod without any securityContext: what Pod Security `restricted` must refuse. */
function unsecured(spec: Obj): Obj {
  const { securityContext: _, ...rest } = spec;
  return { ...rest, containers: rest.containers.map(({ securityContext: _c, ...c }: Obj) => c) };
}

let kube: Kube;
let ns: string;
let templates: { name: string; spec: Obj }[];
let shipped: Obj[];

beforeAll(async () => {
  kube = await admin('a');
  const files = objectFiles(render({ apis: await loadCatalog(), outdir: 'unused' }));
  templates = podTemplates(files);
  shipped = [...files.values()].flatMap((t) => parseYaml(t)) as Obj[];
});

describe('Pod Security restricted', () => {
  it('admits a Pod of every shipped pod template, and refuses it without its securityContext', async () => {
    ns = await testNamespace(kube, 'psa');
    const labels = { 'pod-security.kubernetes.io/enforce': 'restricted' };
    await requireOk(kube, 'PATCH', `/api/v1/namespaces/${ns}`, { metadata: { labels } }, 'application/merge-patch+json');
    // The backend, the konnector, and the runtimes of provider-kubernetes and the function.
    expect(templates.map((t) => t.name).sort()).toEqual([
      'Deployment klutch-bind-backend/klutch-bind-backend',
      'Deployment klutch-bind/konnector',
      'DeploymentRuntimeConfig crossplane-contrib-provider-kubernetes',
      'DeploymentRuntimeConfig klutch-kit-function-dataservices',
    ]);
    const results: string[] = [];
    for (const t of templates) {
      const dryRun = (spec: Obj) =>
        kube.request('POST', `/api/v1/namespaces/${ns}/pods?dryRun=All`, {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { generateName: 'psa-' },
          spec,
        });
      const ok = await dryRun(t.spec);
      results.push(`${t.name}: ${ok.code === 201 ? 'admitted' : `${ok.code} ${ok.body.message}`}`);
      const bare = await dryRun(unsecured(t.spec));
      const refused = bare.code === 403 && String(bare.body.message).includes('violates PodSecurity "restricted:latest"');
      results.push(`${t.name} without securityContext: ${refused ? 'refused' : `${bare.code} ${bare.body.message}`}`);
    }
    expect(results).toEqual(templates.flatMap((t) => [`${t.name}: admitted`, `${t.name} without securityContext: refused`]));
  });

  it('accepts every Namespace and NetworkPolicy synth writes as written (strict server-side dry run)', async () => {
    const space = await testNamespace(kube, 'psa-np');
    const results: string[] = [];
    for (const o of shipped.filter((x) => x.kind === 'Namespace' || x.kind === 'NetworkPolicy')) {
      const where = `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`;
      // Into the test's namespace, or under a fresh name: the shared cluster may hold the originals.
      const body =
        o.kind === 'Namespace'
          ? { ...o, metadata: { ...o.metadata, name: `${space}-ns` } }
          : { ...o, metadata: { ...o.metadata, namespace: space } };
      const url = o.kind === 'Namespace' ? '/api/v1/namespaces' : `/apis/networking.k8s.io/v1/namespaces/${space}/networkpolicies`;
      const r = await kube.request('POST', `${url}?dryRun=All&fieldValidation=Strict`, body);
      results.push(`${where}: ${r.code === 201 ? 'accepted' : `${r.code} ${r.body.message}`}`);
    }
    // Namespaces klutch-bind-backend and klutch-bind, each with a default-deny and an allow policy, the
    // control-plane konnector's klutch-control-plane in the app cluster (dist/app-cluster/control-plane-konnector/),
    // the function's policy in crossplane-system (dist/control-plane/function/), and the monitoring Components' scrape
    // policies of the backend, the function and the konnector.
    expect(results).toHaveLength(11);
    expect(results.filter((r) => !r.endsWith(': accepted'))).toEqual([]);
  });
});
