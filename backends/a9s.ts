/**
 * The a9s backend: data services on VMs, provisioned by the a9s service brokers through provider-anynines' managed
 * resources (dataservices.anynines.com/v1 ServiceInstance, ServiceBinding, Backup, Restore). Everything the a9s
 * backend means for a recipe is here: the MR kinds, the broker's provider configs, the Cloud Foundry org and space
 * every instance carries, where the broker reports status and failure.
 *
 * On the v2 target (Crossplane v2's namespaced composites, which may compose only namespaced resources) the managed
 * resource, which provider-anynines has only cluster-scoped, is wrapped in provider-kubernetes' namespaced Object in
 * the composite's namespace (as a8s is), named `<namespace>.<name>`, or — after a move from the v1 package — wrapping
 * the MR the v1 composite made for the same claim, by its name; the MR still publishes `<claim>-creds` itself
 * (docs/decisions/crossplane-v2.md).
 */
import type { FieldMapping, LabelMapping, ParameterMapping, ProviderConfigSelector, Recipe, StatusMapping } from '../recipe';
import { CLUSTER_PROVIDER_CONFIG_KIND, KUBERNETES_PROVIDER_CONFIG, NAMESPACED_OBJECT_WRAPPER, WATCH_WRAPPED } from './kubernetes-object';

export const A9S = 'a9s';
/** provider-anynines' managed resources. */
export const A9S_API_VERSION = 'dataservices.anynines.com/v1';

/** The platform settings of the a9s backend (`--a9s-organization-guid`, ...): one CF org and space for all instances, as in Klutch. */
export const A9S_SETTINGS = { organizationGuid: 'a9s.organizationGuid', spaceGuid: 'a9s.spaceGuid' } as const;
/**
 * Klutch's pair (every a9s Composition of Klutch v1.5.0 hard-codes it), so a platform that ran Klutch keeps its
 * instances where they are; set the platform's own with `--setting`.
 */
export const A9S_DEFAULT_PLATFORM = {
  organizationGuid: 'a1d46b5c-b639-4f43-85c7-e9a0e5f01f75',
  spaceGuid: '1bf71cf3-9017-4846-bffc-b9b31872bfaf',
} as const;

/** Where provider-anynines reports the broker's operation state (`failed` fails the composite). */
export const A9S_FAILED_STATE_PATHS = ['status.atProvider.state'] as const;

/** provider-anynines `status.atProvider.<f>` → `status.managed.<f>`, plus the MR's conditions, as Klutch maps them. */
export function managedStatus(fields: readonly string[]): StatusMapping[] {
  return [
    ...fields.map((f) => ({ from: `status.atProvider.${f}`, to: `status.managed.${f}` })),
    { from: 'status.conditions', to: 'status.managed.conditions' },
  ];
}

/** Status every service instance reports. */
export const A9S_INSTANCE_STATUS = managedStatus(['createdAt', 'provisionedAt', 'state', 'updatedAt']);

/** Where the namespaced Object shows the wrapped MR as last observed. */
const OBSERVED_MR = 'status.atProvider.manifest';

/**
 * The recipe on the v2 target: the MR inside a namespaced provider-kubernetes Object, Ready when the MR is
 * (`DeriveFromObject`: its Ready condition), status and failure read inside the Object, the MR's own conditions in
 * `status.managed.conditions` once it has any (the Object's until then), and `<claim>-creds` published by the MR.
 */
export function a9sOnV2(r: Recipe): NonNullable<Recipe['v2']> {
  const inside = (path: string) => `${OBSERVED_MR}.${path}`;
  const status = (r.status ?? []).flatMap((m): StatusMapping[] =>
    m.from === 'status.conditions' ? [m, { from: inside(m.from), to: m.to }] : [{ from: inside(m.from), to: m.to }],
  );
  return {
    wrapper: {
      ...NAMESPACED_OBJECT_WRAPPER,
      clusterScoped: true,
      manifestProviderConfig: r.providerConfig,
      // The MR the v1 package composed for the same claim (generated name) is wrapped as it is, not provisioned again.
      adoptByClaimLabels: true,
      fields: [{ to: 'spec.readiness', value: { policy: 'DeriveFromObject' } }, WATCH_WRAPPED],
    },
    providerConfig: { name: KUBERNETES_PROVIDER_CONFIG, kind: CLUSTER_PROVIDER_CONFIG_KIND },
    status,
    ...(r.failedStatePaths ? { failedStatePaths: r.failedStatePaths.map(inside) } : {}),
    ...(r.connectionSecret ? { connectionSecret: { ...r.connectionSecret, byWrapped: true } } : {}),
  };
}

/** A recipe with its v2 part: the same MR, wrapped. */
function withV2(r: Recipe): Recipe {
  return { ...r, v2: a9sOnV2(r) };
}

export interface A9sResourceProps {
  /** The provider-anynines kind: ServiceInstance, ServiceBinding, Backup or Restore. */
  readonly kind: string;
  readonly providerConfig: ProviderConfigSelector;
  readonly fields: readonly FieldMapping[];
  /** Fields of `status.atProvider` copied to `status.managed`. */
  readonly status: readonly string[];
  readonly labels?: readonly LabelMapping[];
  /** The MR writes its connection details to `<claim-name><suffix>` in the claim's namespace. */
  readonly connectionSecretSuffix?: string;
}

/** A recipe for one provider-anynines managed resource. */
export function a9sResource(p: A9sResourceProps): Recipe {
  return withV2({
    resource: { apiVersion: A9S_API_VERSION, kind: p.kind },
    providerConfig: p.providerConfig,
    fields: p.fields,
    ...(p.labels ? { labels: p.labels } : {}),
    ...(p.connectionSecretSuffix ? { connectionSecret: { nameSuffix: p.connectionSecretSuffix } } : {}),
    status: managedStatus(p.status),
    failedStatePaths: A9S_FAILED_STATE_PATHS,
  });
}

export interface A9sInstanceProps {
  /** The broker's ProviderConfig (`<service>-service-broker`). */
  readonly providerConfigName: string;
  readonly parameters: readonly ParameterMapping[];
  readonly ignoredParameters: readonly string[];
  /** Further spec fields of the service (none for most). */
  readonly extraFields?: readonly FieldMapping[];
}

/** The ServiceInstance of a plan-based data service: service and plan, parameters, and the platform's org and space. */
export function a9sInstance(p: A9sInstanceProps): Recipe {
  return withV2({
    resource: { apiVersion: A9S_API_VERSION, kind: 'ServiceInstance' },
    providerConfig: { name: p.providerConfigName },
    fields: [
      { from: 'spec.acceptsIncomplete', to: 'spec.forProvider.acceptsIncomplete', default: true },
      { from: 'spec.service', to: 'spec.forProvider.serviceName', required: true },
      { from: 'spec.plan', to: 'spec.forProvider.planName', required: true },
      ...(p.extraFields ?? []),
      { to: 'spec.forProvider.organizationGuid', setting: A9S_SETTINGS.organizationGuid, default: A9S_DEFAULT_PLATFORM.organizationGuid },
      { to: 'spec.forProvider.spaceGuid', setting: A9S_SETTINGS.spaceGuid, default: A9S_DEFAULT_PLATFORM.spaceGuid },
    ],
    parametersTo: 'spec.forProvider.parameters',
    parameters: p.parameters,
    ignoredParameters: p.ignoredParameters,
    status: A9S_INSTANCE_STATUS,
    failedStatePaths: A9S_FAILED_STATE_PATHS,
  });
}
