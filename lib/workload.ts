/**
 * Stable Pod selectors for the Deployments we ship. cdk8s-plus selects a workload's Pods by `cdk8s.io/metadata.addr`,
 * a label derived from the construct path, and `spec.selector` is immutable: after a renamed construct id, or with
 * the same Deployment written by another tool (the YAML in dist/ applied by GitOps, then `kubectl bind` over it), the
 * Deployment could never be applied again. Ours select on `app.kubernetes.io/*` labels, which depend only on what the
 * workload is. Construct the workload with `select: false`, then call `selectStably`. And the probe timeout they share.
 */
import { ApiObject, Duration, JsonPatch } from 'cdk8s';
import { LabelSelector, Pods, type Deployment, type IPodSelector } from 'cdk8s-plus-33';
import { PROBE_TIMEOUT_SECONDS } from './probes';

/** Every probe's timeout in a Deployment we ship (lib/probes.ts says why it is not Kubernetes' 1 s). */
export const PROBE_TIMEOUT = Duration.seconds(PROBE_TIMEOUT_SECONDS);

/** The selector of a workload of ours: `app.kubernetes.io/name: <name>` and `app.kubernetes.io/part-of: klutch-kit`. */
export function selectorLabels(name: string): Record<string, string> {
  return { 'app.kubernetes.io/name': name, 'app.kubernetes.io/part-of': 'klutch-kit' };
}

/**
 * Selects the workload's Pods by `selectorLabels(name)`, puts those labels on its Pod template and drops the
 * construct-path label from it (two tools writing the same Deployment would otherwise restart its Pods in turn).
 * Returns a selector of the same Pods for NetworkPolicies.
 */
export function selectStably(workload: Deployment, name: string): IPodSelector {
  const labels = selectorLabels(name);
  for (const [k, v] of Object.entries(labels)) workload.podMetadata.addLabel(k, v);
  workload.select(LabelSelector.of({ labels }));
  ApiObject.of(workload).addJsonPatch(JsonPatch.remove('/spec/template/metadata/labels/cdk8s.io~1metadata.addr'));
  return Pods.select(workload, 'StablePods', { labels });
}
