/**
 * provider-kubernetes' namespaced Object (`kubernetes.m.crossplane.io`, provider-kubernetes v1.x), the wrapper every
 * backend uses on the Crossplane v2 target, where a namespaced composite may compose only namespaced resources: the
 * a8s objects (namespaced themselves) and provider-anynines' managed resources (cluster-scoped) go inside one.
 */
import type { FieldMapping, Wrapper } from '../recipe';

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
