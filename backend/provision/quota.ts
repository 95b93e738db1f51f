/**
 * ResourceQuotas the backend writes: on the bind objects of each cluster namespace (provision/consumer.ts) and on the
 * claims and what they cost in each provider namespace (--claim-quota, controllers/service-namespace.*).
 *
 * The API server enforces a quota only once its status counts every resource it limits (until then it refuses every
 * create: "status unknown for quota"), and kube-controller-manager counts a custom resource only some time after it
 * first sees the CRD: so where the backend can count (a namespace it just made holds nothing), it writes the first
 * status itself, as the quota controller would; the controller keeps it up to date.
 */
import { APPLY_PATCH, type BackendClients, FIELD_MANAGER, MERGE_PATCH } from '../kube';
import { Labels, MANAGED_BY } from '../labels';

/** The ResourceQuota of each provider namespace (--claim-quota). */
export const CLAIM_QUOTA = 'klutch-claims';

/**
 * Applies ResourceQuota `name` in `namespace` with `hard`. Where its status does not count every key yet and `count`
 * is given, writes the first status with what `count` says of each key.
 */
export async function applyQuota(
  c: BackendClients,
  namespace: string,
  name: string,
  hard: Readonly<Record<string, string>>,
  count?: (key: string) => Promise<string>,
): Promise<void> {
  const applied = await c.core.patchNamespacedResourceQuota(
    {
      name,
      namespace,
      fieldManager: FIELD_MANAGER,
      force: true,
      body: {
        apiVersion: 'v1',
        kind: 'ResourceQuota',
        metadata: { name, namespace, labels: { [Labels.managedBy]: MANAGED_BY } },
        spec: { hard: { ...hard } },
      },
    },
    APPLY_PATCH,
  );
  const status = applied.status;
  if (!count || Object.keys(hard).every((k) => status?.hard?.[k] === hard[k] && status?.used?.[k] !== undefined)) return;
  const used: Record<string, string> = {};
  for (const k of Object.keys(hard)) used[k] = await count(k);
  await c.core.patchNamespacedResourceQuotaStatus(
    { name, namespace, body: { status: { hard: { ...status?.hard, ...hard }, used: { ...status?.used, ...used } } } },
    MERGE_PATCH,
  );
}
