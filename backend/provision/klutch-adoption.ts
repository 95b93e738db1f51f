/**
 * Adopting what Klutch's backend provisioned. Klutch marks a consumer's cluster namespace only by the annotation
 * `example-backend.klutch.anynines.com/identity`; this backend finds its own by labels (cluster-namespace.ts). A
 * Klutch cluster namespace is adopted by writing those labels onto it, onto the provider namespaces made for its
 * APIServiceNamespaces, and onto its `kubeconfig` Secret; from then on every controller treats it as ours: the token
 * rotation replaces the legacy token in that Secret with a TokenRequest token (the konnector copies it down), and
 * the consumer RBAC controller deletes the cluster-wide ClusterRoleBinding Klutch leaves in Namespaced scope.
 *
 * Trust comes only from what Klutch's backend (the operator's) wrote, never from what a consumer can write: a
 * Namespace (consumers may only `get` theirs), named `<--namespace-prefix>-…`, with the identity annotation; provider
 * namespaces only when their name is exactly `<cluster ns>-<name>` and their annotation names that cluster namespace.
 * The legacy token Secret is deleted (revoking the token) only after the konnector heartbeats `grace` after the
 * rotated token went out: it had the new token by then, so it keeps syncing through the switch. It never expires, so
 * it goes `--legacy-token-max-age` after the adoption (annotation `klutch-kit.anynines.com/adopted`) whatever the
 * heartbeats say, and with the kubeconfig Secret when the consumer is abandoned (cluster-binding.reconcile.ts).
 */
import type { V1Namespace } from '@kubernetes/client-node';
import { Annotations, bindObjects, CLUSTER_BINDING_NAME, type ClusterBinding } from '../../exports/bind-api';
import { BindResources, type BackendClients, isNotFound, MERGE_PATCH } from '../kube';
import { BackendAnnotations, Labels, MANAGED_BY, PodSecurity } from '../labels';
import { identityHash, subjectOf } from './identity';
import { KUBECONFIG_SECRET } from './kubeconfig';
import { BINDER } from './rbac';

/** Where Kubernetes keeps a legacy token Secret's ServiceAccount. */
const SA_NAME_ANNOTATION = 'kubernetes.io/service-account.name';
const LEGACY_TOKEN_TYPE = 'kubernetes.io/service-account-token';

/** Whether `ns` is a cluster namespace Klutch's backend made under `prefix` that this backend has not adopted yet. */
export function isKlutchClusterNamespace(ns: V1Namespace, prefix: string): boolean {
  const m = ns.metadata;
  return Boolean(
    m?.name?.startsWith(`${prefix}-`) && m.annotations?.[Annotations.identity] && !m.labels?.[Labels.identityHash] && !m.deletionTimestamp,
  );
}

/** Klutch's cluster namespaces not adopted yet (one list: those without our identity label). */
export async function klutchClusterNamespaces(c: BackendClients, prefix: string): Promise<V1Namespace[]> {
  const list = await c.core.listNamespace({ labelSelector: `!${Labels.identityHash}` });
  return list.items.filter((ns) => isKlutchClusterNamespace(ns, prefix));
}

/** What an adoption touched, for the log. */
export interface Adopted {
  readonly namespace: string;
  readonly identity: string;
  readonly providerNamespaces: readonly string[];
  readonly kubeconfigSecret: boolean;
}

/**
 * Labels Klutch's cluster namespace `ns` and what belongs to it as this backend labels its own. Idempotent; the
 * cluster namespace is labelled last, so an adoption cut short is found again by `klutchClusterNamespaces`.
 */
export async function adoptClusterNamespace(c: BackendClients, ns: V1Namespace): Promise<Adopted> {
  const name = ns.metadata!.name!;
  const identity = ns.metadata!.annotations![Annotations.identity]!;
  const providerNamespaces: string[] = [];
  for (const p of (await c.core.listNamespace({ labelSelector: `!${Labels.clusterNamespace}` })).items) {
    const owner = p.metadata?.annotations?.[Annotations.apiServiceNamespace];
    const slash = owner?.indexOf('/') ?? -1;
    if (!owner || owner.slice(0, slash) !== name || p.metadata!.name !== `${name}-${owner.slice(slash + 1)}`) continue;
    await labelNamespace(c, p.metadata!.name!, {
      [Labels.clusterNamespace]: name,
      [Labels.managedBy]: MANAGED_BY,
      ...PodSecurity.providerNamespace,
    });
    providerNamespaces.push(p.metadata!.name!);
  }
  let kubeconfigSecret = true;
  await c.core
    .patchNamespacedSecret(
      {
        name: KUBECONFIG_SECRET,
        namespace: name,
        body: { metadata: { labels: { [Labels.kubeconfig]: 'true', [Labels.managedBy]: MANAGED_BY } } },
      },
      MERGE_PATCH,
    )
    .catch((e: unknown) => {
      if (!isNotFound(e)) throw e;
      kubeconfigSecret = false;
    });
  await labelNamespace(
    c,
    name,
    {
      [Labels.identityHash]: identityHash(identity),
      [Labels.subjectHash]: identityHash(subjectOf(identity)),
      [Labels.managedBy]: MANAGED_BY,
      ...PodSecurity.clusterNamespace,
    },
    { [BackendAnnotations.adopted]: new Date().toISOString() },
  );
  return { namespace: name, identity, providerNamespaces, kubeconfigSecret };
}

function labelNamespace(c: BackendClients, name: string, labels: Record<string, string>, annotations?: Record<string, string>) {
  return c.core.patchNamespace({ name, body: { metadata: { labels, ...(annotations ? { annotations } : {}) } } }, MERGE_PATCH);
}

/** The legacy token Secrets of ServiceAccount `klutch-binder` in a cluster namespace (Klutch's backend made one). */
async function legacyTokenSecrets(c: BackendClients, namespace: string): Promise<string[]> {
  const list = await c.core.listNamespacedSecret({ namespace, fieldSelector: `type=${LEGACY_TOKEN_TYPE}` });
  return list.items.filter((s) => s.metadata?.annotations?.[SA_NAME_ANNOTATION] === BINDER).map((s) => s.metadata!.name!);
}

/** Deletes the legacy token Secrets of a cluster namespace (gone already is fine); their names. */
export async function deleteLegacyTokens(c: BackendClients, namespace: string): Promise<string[]> {
  const secrets = await legacyTokenSecrets(c, namespace);
  for (const name of secrets) {
    await c.core.deleteNamespacedSecret({ name, namespace }).catch((e: unknown) => {
      if (!isNotFound(e)) throw e;
    });
  }
  return secrets;
}

export type LegacyTokenState =
  | { readonly state: 'none' }
  /** After a heartbeat past the grace, or at the deadline (`--legacy-token-max-age`). */
  | { readonly state: 'revoked'; readonly secrets: readonly string[]; readonly reason: 'heartbeat' | 'maxAge' }
  /** Kept until `after` (ms) has passed and a heartbeat came later than that. */
  | { readonly state: 'kept'; readonly secrets: readonly string[]; readonly reason: string; readonly after?: number };

/** When the legacy tokens of an adopted cluster namespace go at the latest: `maxAgeMs` after `adoptedAt` (ms). */
export interface LegacyTokenDeadline {
  readonly adoptedAt: number;
  readonly maxAgeMs: number;
  readonly now: number;
}

/**
 * Revokes the legacy token of cluster namespace `namespace` (deletes its token Secrets) once the kubeconfig Secret
 * carries a rotated token issued at least `graceMs` before the ClusterBinding's last heartbeat, or, heartbeat or not,
 * once the deadline has passed.
 */
export async function revokeLegacyToken(
  c: BackendClients,
  namespace: string,
  graceMs: number,
  deadline: LegacyTokenDeadline,
): Promise<LegacyTokenState> {
  const secrets = await legacyTokenSecrets(c, namespace);
  if (secrets.length === 0) return { state: 'none' };
  const latest = deadline.adoptedAt + deadline.maxAgeMs;
  if (deadline.now >= latest) return { state: 'revoked', secrets: await deleteLegacyTokens(c, namespace), reason: 'maxAge' };
  const kept = await keptOrRevoked(c, namespace, secrets, graceMs);
  return kept.state === 'kept' ? { ...kept, after: Math.min(kept.after ?? latest, latest) } : kept;
}

async function keptOrRevoked(c: BackendClients, namespace: string, secrets: string[], graceMs: number): Promise<LegacyTokenState> {
  const kubeconfig = await c.core.readNamespacedSecret({ name: KUBECONFIG_SECRET, namespace }).catch((e: unknown) => {
    if (isNotFound(e)) return undefined;
    throw e;
  });
  const issued = Date.parse(kubeconfig?.metadata?.annotations?.[BackendAnnotations.tokenIssued] ?? '');
  if (Number.isNaN(issued)) return { state: 'kept', secrets, reason: 'the kubeconfig Secret does not carry a rotated token yet' };
  const binding = await bindObjects<ClusterBinding>(c.custom, BindResources.clusterBindings).get({ namespace, name: CLUSTER_BINDING_NAME });
  const after = issued + graceMs;
  const heartbeat = Date.parse(binding?.status?.lastHeartbeatTime ?? '');
  if (Number.isNaN(heartbeat) || heartbeat < after) {
    return { state: 'kept', secrets, reason: 'no konnector heartbeat yet after the rotated token plus --legacy-token-grace', after };
  }
  return { state: 'revoked', secrets: await deleteLegacyTokens(c, namespace), reason: 'heartbeat' };
}
