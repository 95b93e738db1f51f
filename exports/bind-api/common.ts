/**
 * Pieces every bind kind shares: the object envelope, group/resource fields and kubeconfig secret references.
 */
import type { PrinterColumn } from '../../apis/api';
import { s, type Schema, type ValidationRule } from '../../lib/schema';
import { KUBECONFIG_SECRET_KEY } from './constants';

/** The metadata fields bind code reads or writes, in their JSON (wire) form. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** A bind object as it travels over the wire; `status` is absent until a controller writes it. */
export interface KubeObject<ApiVersion extends string, Kind extends string, Spec, Status> {
  apiVersion: ApiVersion;
  kind: Kind;
  metadata: ObjectMeta;
  spec: Spec;
  status?: Status;
}

export interface ObjectSchemaOptions {
  readonly description: string;
  readonly spec: Schema;
  readonly status: Schema;
  /** Upstream requires spec on every kind but APIServiceNamespace and APIServiceBinding. @default true */
  readonly specRequired?: boolean;
  readonly rules?: readonly ValidationRule[];
}

/** The openAPIV3Schema of a whole bind object: apiVersion, kind, metadata, spec, status. */
export function objectSchema(o: ObjectSchemaOptions): Schema {
  return s.object(
    {
      apiVersion: s.string({ description: 'The versioned schema of this object.' }),
      kind: s.string({ description: 'The REST resource this object represents.' }),
      metadata: s.object({}),
      spec: o.spec,
      status: o.status,
    },
    { description: o.description, required: (o.specRequired ?? true) ? ['spec'] : [], rules: o.rules ?? [] },
  );
}

/** An API group and one of its resources (plural). */
export interface GroupResource {
  /** @default "" (the core group) */
  group?: string;
  resource: string;
}

/** DNS subdomain or empty (the core group), as kube-bind validates it. */
export const GROUP_PATTERN = String.raw`^(|[a-z0-9]([-a-z0-9]*[a-z0-9](\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?)$`;
export const RESOURCE_PATTERN = '^[a-z][-a-z0-9]*[a-z0-9]$';

export const groupSchema = s.string({ description: 'API group; empty for the core group.', pattern: GROUP_PATTERN, default: '' });
export const resourceSchema = s.string({ description: 'Resource name (plural).', pattern: RESOURCE_PATTERN });

/** The group and resource fields, for spreading into an object schema. */
export const groupResourceProperties = { group: groupSchema, resource: resourceSchema };

/** A kubeconfig Secret in the object's own namespace (ClusterBinding, provider side). */
export interface LocalKubeconfigSecretRef {
  name: string;
  key: typeof KUBECONFIG_SECRET_KEY;
}

/** A kubeconfig Secret anywhere on the consumer cluster (APIServiceBinding, AppClusterBinding). */
export interface KubeconfigSecretRef extends LocalKubeconfigSecretRef {
  namespace: string;
}

const secretName = s.string({ description: 'Name of the Secret.', minLength: 1 });
const kubeconfigKey = s.string({ description: 'Key in the Secret; must be "kubeconfig".', enum: [KUBECONFIG_SECRET_KEY] });
const refDescription = 'The Secret holding the kubeconfig of the other cluster.';

/** `kubeconfigSecretRef` of a ClusterBinding: immutable, in the object's namespace. */
export const localKubeconfigSecretRefSchema = s
  .object({ key: kubeconfigKey, name: secretName }, { description: refDescription, required: ['key', 'name'] })
  .immutable('kubeconfigSecretRef is immutable');

/** `kubeconfigSecretRef` of the consumer-side bindings: immutable, with a namespace. */
export const kubeconfigSecretRefSchema = s
  .object(
    { key: kubeconfigKey, name: secretName, namespace: s.string({ description: 'Namespace of the Secret.', minLength: 1 }) },
    { description: refDescription, required: ['key', 'name', 'namespace'] },
  )
  .immutable('kubeconfigSecretRef is immutable');

/** The Age column every kind ends with. */
export const ageColumn: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

/** A column showing one field (`status` by default, or `message`) of the condition of the given type. */
export function conditionColumn(
  name: string,
  conditionType: string,
  o: { readonly field?: 'status' | 'message'; readonly priority?: number } = {},
): PrinterColumn {
  const jsonPath = `.status.conditions[?(@.type=="${conditionType}")].${o.field ?? 'status'}`;
  return o.priority === undefined ? { name, type: 'string', jsonPath } : { name, type: 'string', jsonPath, priority: o.priority };
}
