/** The objects of a bound API in the app cluster (its CRD is named like the binding), for `list` and `remove`. */
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { getOrUndefined, retryBusy, type Cluster } from './kube';

export interface BoundObjects {
  readonly kind: string;
  /** The versions the API serves here, each with its deprecation warning when it is deprecated. */
  readonly versions: readonly { readonly name: string; readonly deprecated?: string }[];
  /** `namespace/name` of each object. */
  readonly names: readonly string[];
  /** The objects with a lifetime (`spec.expiresAt`, a cnpg ServiceBinding's): `namespace/name` and when, soonest first. */
  readonly expiries: readonly { readonly name: string; readonly at: string }[];
  /**
   * The objects whose credentials rotated (a cnpg ServiceBinding's `status.managed.rotation`, generation > 0):
   * `namespace/name`, when the new user worked and its credentials were published upstream (unset until then), and
   * when the previous user is revoked (unset until the new credentials reached this cluster).
   */
  readonly rotations: readonly Rotated[];
}

export interface Rotated {
  readonly name: string;
  readonly publishedAt?: string;
  readonly retiresAt?: string;
}

type Listed = {
  metadata: { name: string; namespace?: string };
  spec?: { expiresAt?: unknown };
  status?: { managed?: { rotation?: { generation?: unknown; publishedAt?: unknown; retiresAt?: unknown } } };
};

const timeOf = (v: unknown): string | undefined => (typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? v : undefined);

const rotatedOf = (name: string, o: Listed): Rotated[] => {
  const r = o.status?.managed?.rotation;
  if (typeof r?.generation !== 'number' || r.generation < 1) return [];
  const [publishedAt, retiresAt] = [timeOf(r.publishedAt), timeOf(r.retiresAt)];
  return [{ name, ...(publishedAt ? { publishedAt } : {}), ...(retiresAt ? { retiresAt } : {}) }];
};

/** Undefined when the API's CRD is not (or no longer) in the cluster. */
export async function boundObjects(app: Cluster, binding: string): Promise<BoundObjects | undefined> {
  const crd = (await getOrUndefined(app.crds.readCustomResourceDefinition({ name: binding }))) as V1CustomResourceDefinition | undefined;
  if (!crd) return undefined;
  const version = crd.spec.versions.find((v) => v.storage)?.name ?? crd.spec.versions[0]!.name;
  // Tried again while the API server answers 429: it does so for a moment after the CRD changed (a version the
  // provider deprecated, a schema the konnector updated), while the resource's storage (re)initializes.
  const list = (await retryBusy(() =>
    getOrUndefined(app.custom.listClusterCustomObject({ group: crd.spec.group, version, plural: crd.spec.names.plural })),
  )) as { items?: Listed[] } | undefined;
  const nameOf = (o: { metadata: { name: string; namespace?: string } }) =>
    `${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
  return {
    kind: crd.spec.names.kind,
    versions: crd.spec.versions
      .filter((v) => v.served)
      .map((v) => ({
        name: v.name,
        ...(v.deprecated ? { deprecated: v.deprecationWarning || `${crd.spec.group}/${v.name} is deprecated` } : {}),
      })),
    names: (list?.items ?? []).map(nameOf),
    expiries: (list?.items ?? [])
      .flatMap((o) => (typeof o.spec?.expiresAt === 'string' ? [{ name: nameOf(o), at: o.spec.expiresAt }] : []))
      .sort((a, b) => Date.parse(a.at) - Date.parse(b.at)),
    rotations: (list?.items ?? []).flatMap((o) => rotatedOf(nameOf(o), o)),
  };
}
