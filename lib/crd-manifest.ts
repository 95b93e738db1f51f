/**
 * A CustomResourceDefinition document written from a typed schema: used for the function's input CRD and the bind API
 * CRDs, so every CRD klutch-kit ships comes from schema code, not copied YAML. Plain data, no construct library: the
 * backend and konnector bundles install CRDs from it and must not carry cdk8s (lib/crd.ts is the construct).
 */
import { Names } from './names';
import type { Schema } from './schema';

/** An additional printer column of a CRD (`kubectl get` output). */
export interface PrinterColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  readonly jsonPath: string;
  readonly description?: string;
  readonly priority?: number;
}

export interface CrdVersion {
  readonly name: string;
  /** @default true */
  readonly served?: boolean;
  /** @default true for the only or first version */
  readonly storage?: boolean;
  /** The `openAPIV3Schema` of the whole object (apiVersion, kind, metadata, spec, status). */
  readonly schema: Schema;
  /** Adds the status subresource. @default false */
  readonly statusSubresource?: boolean;
  readonly printerColumns?: readonly PrinterColumn[];
}

export interface CrdProps {
  readonly group: string;
  readonly kind: string;
  /** @default the kind's English plural, lower-cased (Names.plural); required for a kind ending in `s` */
  readonly plural?: string;
  /** @default the lower-cased kind */
  readonly singular?: string;
  /** @default `<kind>List` */
  readonly listKind?: string;
  readonly shortNames?: readonly string[];
  readonly categories?: readonly string[];
  readonly scope: 'Namespaced' | 'Cluster';
  readonly versions: readonly CrdVersion[];
  readonly annotations?: Readonly<Record<string, string>>;
}

/** The plain CRD document, for code that needs it without a construct tree (tests, the bind backend). */
export function crdManifest(props: CrdProps): Record<string, unknown> {
  if (props.versions.length === 0) throw new Error(`CRD ${props.kind}.${props.group}: versions is empty; add at least one version`);
  const storage = props.versions.filter((v, i) => v.storage ?? i === 0);
  if (storage.length !== 1)
    throw new Error(`CRD ${props.kind}.${props.group}: exactly one version must be the storage version, found ${storage.length}`);
  const plural = props.plural ?? Names.plural(props.kind);
  if (!plural)
    throw new Error(
      `CRD ${props.kind}.${props.group}: plural: kind "${props.kind}" ends in "s", so its plural cannot be derived; set plural (the resource name in URLs and RBAC)`,
    );
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${props.group}`, ...(props.annotations ? { annotations: { ...props.annotations } } : {}) },
    spec: {
      group: props.group,
      names: {
        kind: props.kind,
        listKind: props.listKind ?? `${props.kind}List`,
        plural,
        singular: props.singular ?? props.kind.toLowerCase(),
        ...(props.shortNames?.length ? { shortNames: [...props.shortNames] } : {}),
        ...(props.categories?.length ? { categories: [...props.categories] } : {}),
      },
      scope: props.scope,
      versions: props.versions.map((v, i) => ({
        name: v.name,
        served: v.served ?? true,
        storage: v.storage ?? i === 0,
        schema: { openAPIV3Schema: v.schema.toJSON() },
        ...(v.statusSubresource ? { subresources: { status: {} } } : {}),
        ...(v.printerColumns?.length ? { additionalPrinterColumns: v.printerColumns.map((c) => ({ ...c })) } : {}),
      })),
    },
  };
}
