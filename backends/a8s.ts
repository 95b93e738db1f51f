/**
 * The a8s backend: data services on Kubernetes, run by the a8s operators. Klutch composes each a8s object
 * (postgresql.anynines.com Postgresql, servicebindings.anynines.com ServiceBinding, backups.anynines.com Backup and
 * Restore) wrapped in a provider-kubernetes Object that creates it in the claim's namespace. Everything the a8s
 * backend means for a recipe is here: the wrapping, the provider config, the plan → resources table, where the
 * operators report status and failure, and the Secret a binding's credentials come from.
 *
 * On the v2 target (Crossplane v2's namespaced composites, which may compose only namespaced resources) the wrapper
 * is provider-kubernetes' namespaced Object (kubernetes.m.crossplane.io, provider-kubernetes v1.x), created in the
 * composite's namespace beside the a8s object, with the platform's ClusterProviderConfig.
 */
import type { FieldMapping, ParameterMapping, Recipe, StatusMapping, Transform } from '../recipe';
import { kubernetesObject, OBJECT_STATUS } from './kubernetes-object';

export const A8S = 'a8s';

/** The wrapped a8s object's observed status and the Object's conditions, copied to `status.managed`. */
export const A8S_STATUS: readonly StatusMapping[] = OBJECT_STATUS;

/**
 * As A8S_STATUS, but `status.managed.conditions` shows the a8s object's own conditions once it reports any (a
 * Backup's or Restore's progress, which Klutch's a8s-backup and a8s-restore Compositions copy there), and the
 * Object's until then; the Object's readiness always reaches the claim as the DataServiceReady condition.
 */
export const A8S_OWN_STATUS: readonly StatusMapping[] = [
  ...A8S_STATUS,
  { from: 'status.atProvider.manifest.status.conditions', to: 'status.managed.conditions' },
];

/** Where the a8s operators report why an object cannot be brought up (PostgreSQL, ServiceBinding `status.error`). */
export const A8S_ERROR_PATHS = ['status.atProvider.manifest.status.error'] as const;

/**
 * When the Object counts as ready (provider-kubernetes `spec.readiness`), per a8s kind: its default,
 * SuccessfulCreate, would make a claim Ready the moment its a8s object exists.
 */
export const A8sReadiness = {
  /** A CEL query on the observed a8s object (`object`). */
  celQuery: (query: string) => ({ policy: 'DeriveFromCelQuery', celQuery: query }),
  /** The a8s object's own Ready condition (the backup manager's Backup and Restore). */
  fromObject: () => ({ policy: 'DeriveFromObject' }),
} as const;

/** The PostgreSQL operator reports `clusterStatus: Running` once every replica is ready. */
export const A8S_POSTGRESQL_READY = A8sReadiness.celQuery(
  "has(object.status) && has(object.status.clusterStatus) && object.status.clusterStatus == 'Running'",
);
/** The service-binding controller reports `implemented: true` once the user and its Secret exist. */
export const A8S_BINDING_READY = A8sReadiness.celQuery(
  'has(object.status) && has(object.status.implemented) && object.status.implemented == true',
);

/**
 * The Secret the a8s service-binding controller writes for a binding and its keys, published through the Object's
 * connectionDetails into the claim's `<claim-name>-creds`. Its name is the one the binding reports in
 * `status.secret.name`; until it reports one, the controller's convention `<binding name>-service-binding`.
 */
export const A8S_BINDING_SECRET = {
  at: 'spec.connectionDetails',
  nameSuffix: '-service-binding',
  nameFrom: 'status.atProvider.manifest.status.secret.name',
  keys: ['database', 'instance_service', 'password', 'username'],
} as const;

export interface A8sObjectProps {
  /** The a8s object's apiVersion and kind. */
  readonly resource: { readonly apiVersion: string; readonly kind: string };
  readonly fields: readonly FieldMapping[];
  /** @default kubernetes-provider */
  readonly providerConfigName?: string;
  /** The claim's credentials Secret `<claim-name><suffix>`, filled from the a8s binding Secret. */
  readonly connectionSecretSuffix?: string;
  /** Whose conditions `status.managed.conditions` shows: the Object's, or the a8s object's own once it has any. @default 'object' */
  readonly conditions?: 'object' | 'own';
  /** When the Object (and so the claim) is ready: one of `A8sReadiness`. */
  readonly readiness: Readonly<Record<string, unknown>>;
}

/** A recipe for one a8s object, wrapped in a provider-kubernetes Object (on the v2 target: the namespaced one). */
export function a8sObject(p: A8sObjectProps): Recipe {
  return kubernetesObject({
    resource: p.resource,
    fields: p.fields,
    readiness: p.readiness,
    providerConfigName: p.providerConfigName,
    status: p.conditions === 'own' ? A8S_OWN_STATUS : A8S_STATUS,
    errorPaths: A8S_ERROR_PATHS,
    ...(p.connectionSecretSuffix ? { connectionSecret: { nameSuffix: p.connectionSecretSuffix, fromSecret: A8S_BINDING_SECRET } } : {}),
  });
}

/** The a8s PostgreSQL kind every a8s operation refers to. */
export const A8S_POSTGRESQL = { apiVersion: 'postgresql.anynines.com/v1beta3', kind: 'Postgresql' } as const;

/** An a8s object reference (`apiVersion`, `kind`, `name`) to the PostgreSQL instance the claim names. */
export function postgresqlRef(at: string): FieldMapping[] {
  return [
    { to: `${at}.apiVersion`, value: A8S_POSTGRESQL.apiVersion },
    { to: `${at}.kind`, value: A8S_POSTGRESQL.kind },
    { from: 'spec.instanceRef', to: `${at}.name`, required: true },
  ];
}

/** The a8s backup manager's `spec.serviceInstance` (`apiGroup`, `kind`, `name`). */
export function postgresqlService(): FieldMapping[] {
  return [
    { to: 'spec.serviceInstance.apiGroup', value: 'postgresql.anynines.com' },
    { to: 'spec.serviceInstance.kind', value: A8S_POSTGRESQL.kind },
    { from: 'spec.instanceRef', to: 'spec.serviceInstance.name', required: true },
  ];
}

/** Resources per plan size. */
export interface A8sSize {
  readonly volumeSize: string;
  readonly cpu: string;
  readonly memory: string;
}

/** A plan as the a8s backend needs it: its name, topology and size. */
export interface A8sPlan {
  readonly name: string;
  readonly topology: string;
  readonly size: string;
}

/** What an a8s offering of a plan-based service adds to the services and plans every backend has. */
export interface BackendA8sOffering {
  readonly services: readonly string[];
  readonly plans: readonly A8sPlan[];
  /** @default kubernetes-provider */
  readonly providerConfigName?: string;
  /** The a8s object the composition wraps into a provider-kubernetes Object. */
  readonly resource: { readonly apiVersion: string; readonly kind: string };
  /** When the object is ready. @default the PostgreSQL operator's `clusterStatus: Running` */
  readonly readiness?: Readonly<Record<string, unknown>>;
  /** `spec.version` is the service name without this prefix, as an integer (`a9s-postgresql13` → 13). */
  readonly versionPrefix: string;
  /** Resources per size; every size of the a8s plans needs an entry. */
  readonly sizes: Readonly<Record<string, A8sSize>>;
  /** Replicas per topology; every topology of the a8s plans needs an entry. */
  readonly replicas: Readonly<Partial<Record<string, number>>>;
}

/** Checks what only an a8s offering has; `fail(field, problem, fix)` throws the definition's error. */
export function checkA8sOffering(o: BackendA8sOffering, fail: (field: string, problem: string, fix: string) => never): void {
  for (const plan of o.plans) {
    if (!o.sizes[plan.size])
      fail(`a8s.sizes.${plan.size}`, `is missing (plan "${plan.name}" uses it)`, 'add volumeSize, cpu and memory for it');
    if (o.replicas[plan.topology] === undefined) {
      fail(`a8s.replicas.${plan.topology}`, `is missing (plan "${plan.name}" uses it)`, 'add the number of replicas for it');
    }
  }
  for (const v of o.services) {
    if (!v.startsWith(o.versionPrefix) || !/^[0-9]+$/.test(v.slice(o.versionPrefix.length))) {
      fail(
        'a8s.versionPrefix',
        `"${o.versionPrefix}" does not leave a number of service "${v}"`,
        'use the prefix before the version digits',
      );
    }
  }
}

export interface A8sInstanceProps {
  readonly offering: BackendA8sOffering;
  readonly parameters: readonly ParameterMapping[];
  readonly ignoredParameters: readonly string[];
  readonly extraFields?: readonly FieldMapping[];
}

/** The a8s object of a plan-based data service: version from the service, resources and replicas from the plan. */
export function a8sInstance(p: A8sInstanceProps): Recipe {
  const o = p.offering;
  const version: Transform[] = [{ type: 'trimPrefix', prefix: o.versionPrefix }, { type: 'toInteger' }];
  return {
    ...a8sObject({
      resource: o.resource,
      providerConfigName: o.providerConfigName,
      fields: [{ from: 'spec.service', to: 'spec.version', required: true, transforms: version }, ...(p.extraFields ?? [])],
      readiness: o.readiness ?? A8S_POSTGRESQL_READY,
    }),
    parametersTo: 'spec.parameters',
    parameters: p.parameters,
    ignoredParameters: p.ignoredParameters,
    planTable: {
      fromFieldPath: 'spec.plan',
      plans: Object.fromEntries(
        o.plans.map((plan) => {
          const size = o.sizes[plan.size] as A8sSize;
          return [
            plan.name,
            {
              'spec.replicas': o.replicas[plan.topology],
              'spec.volumeSize': size.volumeSize,
              'spec.resources.requests.cpu': size.cpu,
              'spec.resources.limits.cpu': size.cpu,
              'spec.resources.requests.memory': size.memory,
              'spec.resources.limits.memory': size.memory,
            },
          ];
        }),
      ),
    },
  };
}
