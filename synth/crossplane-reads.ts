/**
 * What Crossplane core must be allowed to read for the function: the kinds the recipes' `diagnostics`, `errorsFrom`
 * and `valueFrom` ask for (a cnpg claim's Pods, its Cluster, its instance's Service). Crossplane fetches a function's extra resources with its own identity, through its cache (an
 * informer per kind, so `list` and `watch` beside `get`), and its Helm chart's ClusterRole aggregates every ClusterRole
 * labelled `rbac.crossplane.io/aggregate-to-crossplane: "true"` (v1.20 and v2 alike), so one such role extends it
 * without editing Crossplane's install. The kinds come from the recipes, never from a list here.
 */
import * as kplus from 'cdk8s-plus-33';
import { Construct } from 'constructs';
import type { Recipe } from '../recipe/recipe';
import { groupOf, type KindRef } from './resource-names';

/** The aggregated ClusterRole's name. */
export const CROSSPLANE_READS_ROLE = 'klutch-kit-crossplane-reads';
/** The label Crossplane's own ClusterRole aggregates by. */
export const AGGREGATE_TO_CROSSPLANE = 'rbac.crossplane.io/aggregate-to-crossplane';

/**
 * The kinds a recipe has Crossplane read for it (its diagnostics, errorsFrom, valueFrom and queue, on either target;
 * the namespace's ResourceQuotas for diagnostics.volumes, its PersistentVolumeClaims where they are `labelled`).
 */
export function crossplaneReadKinds(recipe: Recipe): KindRef[] {
  const asked = [recipe.diagnostics, recipe.errorsFrom, recipe.valueFrom, recipe.queue];
  return [...asked, ...[recipe.v2?.diagnostics, recipe.v2?.errorsFrom, recipe.v2?.valueFrom, recipe.v2?.queue]].flatMap((d) => [
    ...(d ? [{ apiVersion: d.apiVersion, kind: d.kind }] : []),
    ...(d && 'volumes' in d && d.volumes ? [RESOURCE_QUOTA] : []),
    ...(d && 'volumes' in d && d.volumes?.labelled ? [VOLUME_CLAIM] : []),
  ]);
}

/** What diagnostics.volumes reads, and with `labelled` also. */
const RESOURCE_QUOTA: KindRef = { apiVersion: 'v1', kind: 'ResourceQuota' };
const VOLUME_CLAIM: KindRef = { apiVersion: 'v1', kind: 'PersistentVolumeClaim' };

export interface CrossplaneReadsProps {
  /** The kinds to read, each once (crossplaneReadKinds over the catalog). */
  readonly kinds: readonly KindRef[];
  /** The RBAC resource name of a kind (synth/resource-names.ts). */
  readonly resourceOf: (k: KindRef) => string;
}

/** A ClusterRole Crossplane's aggregates: get, list and watch on the kinds, one rule per API group. */
export class CrossplaneReads extends Construct {
  constructor(scope: Construct, id: string, props: CrossplaneReadsProps) {
    super(scope, id);
    if (props.kinds.length === 0) throw new Error('CrossplaneReads: no kinds to read; emit it only when a recipe has diagnostics');
    const role = new kplus.ClusterRole(this, 'ClusterRole', {
      metadata: {
        name: CROSSPLANE_READS_ROLE,
        labels: { [AGGREGATE_TO_CROSSPLANE]: 'true', 'app.kubernetes.io/name': 'crossplane', 'app.kubernetes.io/part-of': 'klutch-kit' },
      },
    });
    const byGroup = new Map<string, Set<string>>();
    for (const k of props.kinds)
      byGroup.set(groupOf(k.apiVersion), (byGroup.get(groupOf(k.apiVersion)) ?? new Set()).add(props.resourceOf(k)));
    for (const [apiGroup, resources] of [...byGroup].sort(([a], [b]) => a.localeCompare(b)))
      role.allow(
        ['get', 'list', 'watch'],
        ...[...resources].sort().map((resourceType) => kplus.ApiResource.custom({ apiGroup, resourceType })),
      );
  }
}
