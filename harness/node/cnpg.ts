/**
 * CloudNativePG on a harness cluster with a node, installed the way its users install it (docs/decisions/cloudnative-pg.md):
 * the CRDs of its Go module's `config/crd/bases` (verbatim), then its release manifest (test/fixtures/cloudnative-pg/,
 * generated from the module's `config/` with kustomize) with only `imagePullPolicy` changed, since the images are the
 * project's builds imported into the node (cnpg-images.ts). And the volumes its PVCs bind: hostPath PersistentVolumes
 * the harness makes in the node's run folder, under a default StorageClass without a provisioner.
 */
import { chownSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { cnpgSource } from '../tools/cloudnative-pg';
import { apply, established } from '../cluster/kube';
import { eventually, getObject, type Kube, type WireObject } from '../cluster/kube';
import { repoRoot } from '../root';

export const CNPG_NAMESPACE = 'cnpg-system';
const CNPG_DEPLOYMENT = 'cnpg-controller-manager';
/** The StorageClass of the harness's volumes, the cluster's default. */
const LOCAL_STORAGE_CLASS = 'klutch-kit-local';

/** The operator's objects: the module's CRDs, then the release manifest (imagePullPolicy IfNotPresent). */
function cnpgManifests(): WireObject[] {
  const bases = join(cnpgSource(), 'config', 'crd', 'bases');
  const crds = readdirSync(bases)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => parseAllDocuments(readFileSync(join(bases, f), 'utf8'))[0]!.toJS() as WireObject);
  const manifest = readFileSync(join(repoRoot(), 'test', 'fixtures', 'cloudnative-pg', 'operator.yaml'), 'utf8');
  const objs = parseAllDocuments(manifest)
    .map((d) => d.toJS() as WireObject)
    .filter(Boolean);
  for (const o of objs) {
    for (const c of o.kind === 'Deployment' ? o.spec.template.spec.containers : []) c.imagePullPolicy = 'IfNotPresent';
  }
  return [...crds, ...objs];
}

/** Installs the operator and waits until its Deployment is available (its webhooks then answer). */
export async function installCnpg(kube: Kube): Promise<void> {
  const objs = cnpgManifests();
  for (const crd of objs.filter((o) => o.kind === 'CustomResourceDefinition')) await apply(kube, crd);
  await Promise.all(objs.filter((o) => o.kind === 'CustomResourceDefinition').map((crd) => established(kube, crd.metadata.name)));
  for (const o of objs.filter((x) => x.kind === 'Namespace')) await apply(kube, o);
  for (const o of objs.filter((x) => x.kind !== 'CustomResourceDefinition' && x.kind !== 'Namespace')) await apply(kube, o);
  await eventually(
    `the CloudNativePG operator Deployment ${CNPG_NAMESPACE}/${CNPG_DEPLOYMENT} available`,
    async () => {
      const d = await getObject(kube, `/apis/apps/v1/namespaces/${CNPG_NAMESPACE}/deployments/${CNPG_DEPLOYMENT}`);
      return d?.status?.availableReplicas >= 1 ? d : undefined;
    },
    180_000,
  );
}

/**
 * `count` hostPath PersistentVolumes of `size` in `dir` (a folder the node sees; owned by `owner`, by default CNPG's
 * postgres user, as a local provisioner would make them), under the default StorageClass LOCAL_STORAGE_CLASS (WaitForFirstConsumer).
 * `claims` reserves them, in order, for the volume claims named (a PV's claimRef): on a cluster others make claims on
 * too, a claim of theirs cannot take one, and its folder is not removed under someone else's database.
 */
export async function localVolumes(
  kube: Kube,
  dir: string,
  count: number,
  size: string,
  prefix = 'local',
  claims: readonly { readonly namespace: string; readonly name: string }[] = [],
  owner = 26,
): Promise<string[]> {
  await apply(kube, {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: LOCAL_STORAGE_CLASS, annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
    provisioner: 'kubernetes.io/no-provisioner',
    volumeBindingMode: 'WaitForFirstConsumer',
    reclaimPolicy: 'Retain',
  });
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const name = `${prefix}-${i}`;
    const path = join(dir, name);
    mkdirSync(path, { recursive: true });
    chownSync(path, owner, owner);
    await apply(kube, {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name },
      spec: {
        capacity: { storage: size },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: LOCAL_STORAGE_CLASS,
        hostPath: { path, type: 'Directory' },
        ...(claims[i] ? { claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', ...claims[i] } } : {}),
      },
    });
    names.push(name);
  }
  return names;
}
