/**
 * Cleaning up bound APIs in an app cluster between suites. Cluster suites share each worker's clusters `a` and `b`:
 * a bound API's CRD left in `b`, owned by a binding that is gone or stuck deleting, makes the next suite's konnector
 * refuse the API as foreign, and that suite waits out every test. A user's cluster is cleaned the same way (README:
 * remove finalizers by hand).
 */
import { eventually, getObject, type Kube, type WireObject } from '../../harness/cluster/kube';

const crdPath = (name: string) => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;

/**
 * Deletes the named APIServiceBindings of `namespace` and waits (up to `timeoutMs`; 0 when no konnector runs) for
 * the konnector to release them — it deletes the API's objects in both clusters, then the CRD, then the binding. What
 * it did not release in time loses its finalizers and its CRD.
 */
export async function releaseBindings(kube: Kube, namespace: string, names: readonly string[], timeoutMs: number): Promise<void> {
  const bindings = `/apis/klutch.anynines.com/v1alpha1/namespaces/${namespace}/apiservicebindings`;
  for (const name of names) await kube.request('DELETE', `${bindings}/${name}`);
  const released = async () => {
    const items = ((await getObject(kube, bindings))?.items ?? []) as WireObject[];
    return items.some((b) => names.includes(b.metadata.name as string)) ? undefined : true;
  };
  const gone = await eventually('the bindings released by the konnector', released, timeoutMs).catch(() => false);
  if (gone) return;
  for (const name of names) {
    await kube.request('PATCH', `${bindings}/${name}`, { metadata: { finalizers: null } }, 'application/merge-patch+json');
    await kube.request('DELETE', crdPath(name));
  }
}

/** Removes a CRD an earlier suite left behind, with its objects (their finalizers dropped), and waits until it is gone. */
export async function removeLeftoverCrd(kube: Kube, name: string): Promise<void> {
  const crd = await getObject(kube, crdPath(name));
  if (!crd) return;
  const version = (crd.spec.versions as WireObject[]).find((v) => v.storage)!.name as string;
  const objects = await getObject(kube, `/apis/${crd.spec.group}/${version}/${crd.spec.names.plural}`);
  for (const o of (objects?.items ?? []) as WireObject[])
    await kube.request(
      'PATCH',
      `/apis/${crd.spec.group}/${version}/namespaces/${o.metadata.namespace}/${crd.spec.names.plural}/${o.metadata.name}`,
      { metadata: { finalizers: null } },
      'application/merge-patch+json',
    );
  await kube.request('DELETE', crdPath(name));
  await eventually(`leftover CRD ${name} gone`, async () => ((await getObject(kube, crdPath(name))) ? undefined : true));
}
