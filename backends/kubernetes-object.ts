/**
 * provider-kubernetes' Object, the wrapper of every backend whose resources are Kubernetes objects (a8s, cnpg): the
 * legacy cluster-scoped Object (`kubernetes.crossplane.io`) on the v1 target, the namespaced one
 * (`kubernetes.m.crossplane.io`, provider-kubernetes v1.x) on the Crossplane v2 target, where a namespaced composite
 * may compose only namespaced resources: the a8s and cnpg objects (namespaced themselves) and provider-anynines'
 * managed resources (cluster-scoped) go inside one. `kubernetesObject()` is the one way a backend wraps an object.
 */
import type { Companion, ConnectionSecret, FieldMapping, Recipe, StatusMapping, Wrapper } from '../recipe';

/** provider-kubernetes' legacy Object, the version whose schema ships in schemas/provider-kubernetes (its storage version). */
export const OBJECT_WRAPPER: Wrapper = {
  apiVersion: 'kubernetes.crossplane.io/v1alpha2',
  kind: 'Object',
  manifestAt: 'spec.forProvider.manifest',
};

/** provider-kubernetes' namespaced Object (v1.x; the schema ships in schemas/provider-kubernetes), for the v2 target. */
export const NAMESPACED_OBJECT_WRAPPER: Wrapper = {
  apiVersion: 'kubernetes.m.crossplane.io/v1alpha1',
  kind: 'Object',
  manifestAt: 'spec.forProvider.manifest',
};

/** provider-kubernetes' provider config our Compositions name (Klutch's a8s compositions use the same name). */
export const KUBERNETES_PROVIDER_CONFIG = 'kubernetes-provider';

/**
 * The kind of that config for the namespaced Object: a cluster-scoped `kubernetes.m.crossplane.io`
 * ClusterProviderConfig the platform owns, as the legacy cluster-scoped ProviderConfig was. A namespaced
 * `ProviderConfig` would be looked up in the composite's namespace, where whoever writes the composite could put one
 * of their own.
 */
export const CLUSTER_PROVIDER_CONFIG_KIND = 'ClusterProviderConfig';

/**
 * `spec.watch: true` on every Object we compose: provider-kubernetes (run with `--enable-watches`, which synth's
 * DeploymentRuntimeConfig passes) then reconciles the Object as soon as its wrapped object changes, so the status a
 * backend writes reaches the claim in about a second instead of on the provider's next poll (30 s for an Object not
 * yet Ready, hard-coded; `--poll` only sets the interval for Ready ones). Without the flag the field does nothing.
 * Measured in bench/readiness; docs/decisions/readiness-lag.md.
 */
export const WATCH_WRAPPED: FieldMapping = { to: 'spec.watch', value: true };

/** The wrapped object's observed status and the Object's conditions, copied to `status.managed`. */
export const OBJECT_STATUS: readonly StatusMapping[] = [
  { from: 'status.atProvider.manifest.status', to: 'status.managed' },
  { from: 'status.conditions', to: 'status.managed.conditions' },
];

export interface KubernetesObjectProps {
  /** The wrapped object's apiVersion and kind. */
  readonly resource: { readonly apiVersion: string; readonly kind: string };
  /** Fields of the wrapped object. */
  readonly fields: readonly FieldMapping[];
  /** When the Object (and so the claim) is ready: provider-kubernetes' `spec.readiness`. @default its SuccessfulCreate */
  readonly readiness?: Readonly<Record<string, unknown>>;
  /** Further fields of the Object itself (`spec.references`). */
  readonly wrapperFields?: readonly FieldMapping[];
  /** @default kubernetes-provider */
  readonly providerConfigName?: string;
  /** @default OBJECT_STATUS */
  readonly status?: readonly StatusMapping[];
  readonly errorPaths?: readonly string[];
  /** The claim's `<claim-name><nameSuffix>`, published from a Secret the backend writes (`fromSecret`). */
  readonly connectionSecret?: ConnectionSecret;
}

/**
 * A recipe for one namespaced Kubernetes object inside provider-kubernetes' Object, created in the claim's namespace;
 * on the v2 target inside the namespaced Object with the platform's ClusterProviderConfig, writing the claim's
 * Secret into its own namespace. Every Object watches its wrapped object (WATCH_WRAPPED).
 */
export function kubernetesObject(p: KubernetesObjectProps): Recipe {
  const readiness: FieldMapping[] = p.readiness ? [{ to: 'spec.readiness', value: p.readiness }] : [];
  const fields: FieldMapping[] = [...readiness, ...(p.wrapperFields ?? []), WATCH_WRAPPED];
  const providerConfig = { name: p.providerConfigName ?? KUBERNETES_PROVIDER_CONFIG };
  const cs = p.connectionSecret;
  return {
    resource: p.resource,
    wrapper: { ...OBJECT_WRAPPER, fields },
    providerConfig,
    fields: p.fields,
    ...(cs ? { connectionSecret: cs } : {}),
    status: p.status ?? OBJECT_STATUS,
    ...(p.errorPaths ? { errorPaths: p.errorPaths } : {}),
    v2: {
      wrapper: { ...NAMESPACED_OBJECT_WRAPPER, fields },
      providerConfig: { ...providerConfig, kind: CLUSTER_PROVIDER_CONFIG_KIND },
      ...(cs ? { connectionSecret: { ...cs, local: true } } : {}),
    },
  };
}

/**
 * A companion (recipe.ts `Companion`) holding one namespaced Kubernetes object beside the claim, in an Object as
 * `kubernetesObject()` makes it; one for each target, to go into the recipe's `companions` and its `v2.companions`.
 */
export function kubernetesCompanion(
  name: string,
  p: Pick<KubernetesObjectProps, 'resource' | 'fields' | 'providerConfigName'>,
): { readonly v1: Companion; readonly v2: Companion } {
  const r = kubernetesObject(p);
  const own = { name, resource: r.resource, fields: r.fields };
  return {
    v1: { ...own, wrapper: r.wrapper, providerConfig: r.providerConfig },
    v2: { ...own, wrapper: r.v2?.wrapper, providerConfig: r.v2?.providerConfig ?? r.providerConfig },
  };
}
