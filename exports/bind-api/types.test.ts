/**
 * The TypeScript interfaces and the schemas describe the same objects: one object per kind, typed with the
 * interfaces and setting every field, uses no field the schema lacks (the API server would prune it) and reaches
 * every field the schema has (so no schema field lacks a typed counterpart).
 */
import { describe, expect, it } from 'vitest';
import type { JSONSchemaProps, Schema } from '../../lib/schema';
import {
  apiServiceBindingSchema,
  apiServiceExportRequestSchema,
  apiServiceExportSchema,
  apiServiceExportTemplateSchema,
  apiServiceNamespaceSchema,
  appClusterBindingSchema,
  BIND_API_VERSION,
  clusterBindingSchema,
  Kinds,
  TEMPLATE_API_VERSION,
  type APIServiceBinding,
  type APIServiceExport,
  type APIServiceExportRequest,
  type APIServiceExportTemplate,
  type APIServiceNamespace,
  type AppClusterBinding,
  type ClusterBinding,
  type Condition,
  type ObjectMeta,
  type PermissionClaim,
} from './index';

/** Walks `value` along `schema`, collecting the schema paths it reaches and the fields the schema does not know. */
function walk(schema: JSONSchemaProps, value: unknown, path: string, reached: Set<string>, unknown: string[]): void {
  reached.add(path);
  if (Array.isArray(value)) {
    value.forEach((v) => walk(schema.items ?? {}, v, `${path}[]`, reached, unknown));
  } else if (value !== null && typeof value === 'object') {
    if (schema['x-kubernetes-preserve-unknown-fields'] && !schema.properties) return;
    for (const [k, v] of Object.entries(value)) {
      const child = schema.properties?.[k] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
      if (!child) unknown.push(`${path}.${k}`);
      else walk(child, v, schema.properties?.[k] ? `${path}.${k}` : `${path}{}`, reached, unknown);
    }
  }
}

/** Every path of a schema, in walk()'s notation. */
function schemaPaths(schema: JSONSchemaProps, path = '', out = new Set<string>()): Set<string> {
  out.add(path);
  if (schema.items) schemaPaths(schema.items, `${path}[]`, out);
  if (typeof schema.additionalProperties === 'object') schemaPaths(schema.additionalProperties, `${path}{}`, out);
  for (const [k, v] of Object.entries(schema.properties ?? {})) schemaPaths(v, `${path}.${k}`, out);
  return out;
}

const meta: ObjectMeta = {
  name: 'x',
  generateName: 'x-',
  namespace: 'cluster-abc',
  uid: 'u',
  resourceVersion: '1',
  generation: 1,
  creationTimestamp: '2026-01-01T00:00:00Z',
  labels: { a: 'b' },
  annotations: { a: 'b' },
  finalizers: ['klutch.anynines.com/syncer'],
  ownerReferences: [{ apiVersion: 'v1', kind: 'Namespace', name: 'n', uid: 'u', controller: true, blockOwnerDeletion: true }],
};

const conditions: Condition[] = [
  { type: 'Ready', status: 'False', severity: 'Error', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'R', message: 'm' },
];

const matcher = [{ pattern: 'klutch.anynines.com/*' }];
const claim: PermissionClaim = {
  group: '',
  resource: 'secrets',
  version: 'v1',
  selector: { names: ['*'], namespaces: ['*'], owner: 'Provider', labelSelectors: [{ app: 'x' }], fieldSelectors: ['metadata.name=x'] },
  required: true,
  autoAdopt: false,
  autoDonate: true,
  create: { replaceExisting: true },
  onConflict: { recreateWhenConsumerSideDeleted: true },
  read: { labels: matcher, labelsOnProviderOwnedObjects: matcher, annotations: matcher, overrideAnnotations: matcher },
  update: {
    fields: ['spec'],
    preserving: ['spec.x'],
    alwaysRecreate: false,
    labels: matcher,
    labelsOnConsumerOwnedObjects: matcher,
    annotations: matcher,
    annotationsOnConsumerOwnedObjects: matcher,
  },
};

const names = {
  kind: 'PostgresqlInstance',
  plural: 'postgresqlinstances',
  singular: 'postgresqlinstance',
  listKind: 'L',
  shortNames: ['pg'],
  categories: ['all'],
};

const exportObject: APIServiceExport = {
  apiVersion: BIND_API_VERSION,
  kind: Kinds.APIServiceExport,
  metadata: meta,
  spec: {
    group: 'anynines.com',
    names,
    scope: 'Cluster',
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        deprecated: false,
        deprecationWarning: 'w',
        schema: { openAPIV3Schema: { type: 'object' } },
        subresources: {
          status: {},
          scale: { specReplicasPath: '.spec.r', statusReplicasPath: '.status.r', labelSelectorPath: '.status.s' },
        },
        additionalPrinterColumns: [
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'd', format: 'f', priority: 0 },
        ],
      },
    ],
    permissionClaims: [claim],
    informerScope: 'Cluster',
    clusterScopedIsolation: 'Prefixed',
  },
  status: { acceptedNames: names, storedVersions: ['v1'], conditions },
};

const requestObject: APIServiceExportRequest = {
  apiVersion: BIND_API_VERSION,
  kind: Kinds.APIServiceExportRequest,
  metadata: meta,
  spec: {
    parameters: { region: 'eu' },
    resources: [{ group: 'anynines.com', resource: 'postgresqlinstances', versions: ['v1'], permissionClaims: [claim] }],
  },
  status: { phase: 'Succeeded', terminalMessage: 't', conditions },
};

const namespaceObject: APIServiceNamespace = {
  apiVersion: BIND_API_VERSION,
  kind: Kinds.APIServiceNamespace,
  metadata: meta,
  spec: {},
  status: { namespace: 'cluster-abc-default' },
};

const bindingObject: APIServiceBinding = {
  apiVersion: BIND_API_VERSION,
  kind: Kinds.APIServiceBinding,
  metadata: meta,
  spec: {
    kubeconfigSecretRef: { name: 'kubeconfig-x', namespace: 'klutch-bind', key: 'kubeconfig' },
    permissionClaims: [{ ...claim, state: 'Accepted' }],
  },
  status: { providerPrettyName: 'p', conditions },
};

const clusterBindingObject: ClusterBinding = {
  apiVersion: BIND_API_VERSION,
  kind: Kinds.ClusterBinding,
  metadata: { ...meta, name: 'cluster' },
  spec: { kubeconfigSecretRef: { name: 'kubeconfig', key: 'kubeconfig' }, providerPrettyName: 'p', serviceProviderSpec: { tier: 'x' } },
  status: { lastHeartbeatTime: '2026-01-01T00:00:00Z', heartbeatInterval: '5m0s', konnectorVersion: 'v1.5.0', conditions },
};

const appClusterBindingObject: AppClusterBinding = {
  apiVersion: BIND_API_VERSION,
  kind: Kinds.AppClusterBinding,
  metadata: meta,
  spec: {
    apiExports: [{ group: 'anynines.com', resource: 'postgresqlinstances' }],
    konnector: { deploy: true, overrides: { image: 'konnector:v1', args: ['--v=2'] } },
    kubeconfigSecretRef: { name: 'app', namespace: 'default', key: 'kubeconfig' },
  },
  status: { conditions, rootNamespace: 'klutch-bind-default-app' },
};

const templateObject: APIServiceExportTemplate = {
  apiVersion: TEMPLATE_API_VERSION,
  kind: Kinds.APIServiceExportTemplate,
  metadata: meta,
  spec: { APIServiceSelector: { group: 'anynines.com', resource: 'postgresqlinstances', version: 'v1' }, permissionClaims: [claim] },
  status: {},
};

const cases: { kind: string; schema: Schema; object: object; notCovered?: string }[] = [
  { kind: Kinds.APIServiceExport, schema: apiServiceExportSchema, object: exportObject },
  { kind: Kinds.APIServiceExportRequest, schema: apiServiceExportRequestSchema, object: requestObject },
  { kind: Kinds.APIServiceNamespace, schema: apiServiceNamespaceSchema, object: namespaceObject },
  { kind: Kinds.APIServiceBinding, schema: apiServiceBindingSchema, object: bindingObject },
  { kind: Kinds.ClusterBinding, schema: clusterBindingSchema, object: clusterBindingObject },
  // The overrides are corev1.Container fields, typed by @kubernetes/client-node; this fixture sets only two.
  {
    kind: Kinds.AppClusterBinding,
    schema: appClusterBindingSchema,
    object: appClusterBindingObject,
    notCovered: '.spec.konnector.overrides.',
  },
  { kind: Kinds.APIServiceExportTemplate, schema: apiServiceExportTemplateSchema, object: templateObject },
];

describe('interfaces match schemas', () => {
  it.each(cases)('$kind: no field unknown to the schema, every schema field typed', ({ schema, object, notCovered }) => {
    const json = schema.toJSON();
    const reached = new Set<string>();
    const unknown: string[] = [];
    // metadata is the API server's own (the schema says only `type: object`); ObjectMeta is checked by tsc alone.
    walk(json, { ...object, metadata: {} }, '', reached, unknown);
    expect(unknown).toEqual([]);
    const missing = [...schemaPaths(json)].filter((p) => !reached.has(p) && !(notCovered && p.startsWith(notCovered)));
    expect(missing).toEqual([]);
  });
});
