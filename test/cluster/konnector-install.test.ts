/**
 * kubectl bind's konnector install over a konnector Deployment that selects its Pods otherwise: Klutch's, applied from
 * its own manifest (selector `app: konnector`, test/fixtures/klutch-bind-deploy/konnector/). `spec.selector` is
 * immutable, so a plain apply would fail; the install replaces the Deployment and the app cluster ends with ours.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { appCluster } from '../../cli/kube';
import { installKonnector, konnectorManifests } from '../../cli/konnector-install';
import { cluster } from '../support/cluster';
import type { ClusterInfo } from '../../harness/cluster/control-plane';
import { applyAt, eventually, getObject, kubeFor, requireOk, type Kube } from '../../harness/cluster/kube';
import { repoRoot } from '../../harness/root';

const root = repoRoot();

const ns = `kki-${Math.random().toString(36).slice(2, 8)}`;
let b: ClusterInfo;
let kb: Kube;
const deploymentPath = `/apis/apps/v1/namespaces/${ns}/deployments/konnector`;

beforeAll(async () => {
  b = await cluster('b');
  kb = kubeFor(b);
  await requireOk(kb, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
});

afterAll(async () => {
  await kb?.request('DELETE', `/api/v1/namespaces/${ns}`);
  for (const kind of ['clusterroles', 'clusterrolebindings'])
    await kb?.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/${kind}/${ns}-konnector`);
});

it("replaces a konnector Deployment with another selector (Klutch's app: konnector) instead of failing on the immutable field", async () => {
  const klutch = parse(readFileSync(join(root, 'test/fixtures/klutch-bind-deploy/konnector/90-deployment.yaml'), 'utf8'));
  klutch.metadata.namespace = ns;
  await applyAt(kb, deploymentPath, klutch);
  const before = await getObject(kb, deploymentPath);
  expect(before?.spec.selector).toEqual({ matchLabels: { app: 'konnector' } });

  const r = await installKonnector(appCluster({ kubeconfig: b.kubeconfig }, process.env), { namespace: ns, grants: [], downgrade: false });
  expect(r.konnector).toBe('replaced');
  const want = konnectorManifests({ namespace: ns, grants: [], konnector: true }).find((m) => m.kind === 'Deployment') as {
    spec: { selector: unknown };
  };
  const after = await eventually('our konnector Deployment in place of Klutch’s', async () => {
    const d = await getObject(kb, deploymentPath);
    return d && d.metadata.uid !== before!.metadata.uid ? d : undefined;
  });
  expect(after.spec.selector).toEqual(want.spec.selector);
  // Pods that selected Klutch's labels still find ours: the template keeps `app: konnector` beside our labels.
  expect(after.spec.template.metadata.labels).toMatchObject({ app: 'konnector', 'app.kubernetes.io/name': 'konnector' });

  // Run again: nothing to replace any more.
  const again = await installKonnector(appCluster({ kubeconfig: b.kubeconfig }, process.env), {
    namespace: ns,
    grants: [],
    downgrade: false,
  });
  expect(again.konnector).toBe('unchanged');
  expect((await getObject(kb, deploymentPath))?.metadata.uid).toBe(after.metadata.uid);
});
