/**
 * Permission claims: Secrets and ConfigMaps that travel with a bound API, one key (`namespace/name` on the side the
 * object comes from) at a time. One code path for both directions: `Provider` claims copy provider objects down to
 * the app cluster, `Consumer` claims copy app objects up.
 *
 * Only what a claim selects moves (Klutch moves every Secret of a namespace, and writes onto the provider's objects):
 * the name must match `selector.names` AND the object must belong to a bound object of this API (`claimOwner`) — a
 * claim's `<claim>-creds` Secret, never an unrelated one. The copy is owned by the bound object's
 * twin on the other side, so the app cluster's garbage collector removes it with the claim, and carries
 * `klutch.anynines.com/resource-owner: <side>` as annotation (Klutch's marker) and label (what the konnector
 * watches). An object of the same name that is not such a copy is never overwritten or deleted.
 */
import type { ReconcileResult } from '../../../../controller';
import { Annotations, claimOfCredentials, withoutReservedKeys, type ClaimOwner } from '../../../../exports/bind-api';
import { credentialsReceipt } from '../../../../lib/credentials-receipt';
import { isDeleting, jsonEqual, ownerReference, type Obj } from '../../../kube/objects';

export interface ClaimDeps {
  /** Where the objects come from. */
  readonly from: ClaimOwner;
  /** `selector.names`: exact names, `*` for any. */
  readonly names: readonly string[];
  getSource(namespace: string, name: string): Obj | undefined;
  /**
   * Whether the sources of `namespace`, and the bound objects that own them, have been listed. Until then a source
   * or owner not in the cache may merely not be read yet (a konnector just started, a namespace just assigned).
   */
  listed(sourceNamespace: string): boolean;
  /** Source namespace → target namespace; undefined when unmapped. */
  targetNamespace(sourceNamespace: string): string | undefined;
  /** The twin, on the target side, of the bound object that owns `source`; undefined when no bound object owns it. */
  ownerTwin(source: Obj): Obj | undefined;
  getTarget(namespace: string, name: string): Obj | undefined;
  /** Creates or replaces the target (`existing` is the current one, if any); false when another object holds its name. */
  writeTarget(desired: Obj, existing: Obj | undefined): Promise<boolean>;
  deleteTarget(namespace: string, name: string, uid: string): Promise<void>;
  /**
   * Deletes a copy Klutch's konnector made (annotation only, so the label watch does not show it), if one is there:
   * its source is gone. @default none (nothing to take over)
   */
  deleteKlutchCopy?(namespace: string, name: string): Promise<void>;
  warn(source: Obj, reason: string, message: string): void;
  /**
   * Records, on the bound object that owns `source`, that the app cluster holds the credentials of `receipt`
   * (lib/credentials-receipt.ts): a rotation's overlap counts from then on. @default none (`Consumer` claims)
   */
  acknowledge?(source: Obj, receipt: string): Promise<void>;
}

/** How soon a key whose source may be gone is looked at again while the provider side is still listing. */
const LISTING_RETRY_MS = 2_000;

/** Fields of a Secret or ConfigMap that are its content. */
const CONTENT = ['data', 'binaryData', 'stringData', 'type', 'immutable'] as const;

export async function reconcileClaim(deps: ClaimDeps, sourceNamespace: string, name: string): Promise<ReconcileResult> {
  const targetNamespace = deps.targetNamespace(sourceNamespace);
  if (targetNamespace === undefined) return undefined;
  const source = deps.getSource(sourceNamespace, name);
  const target = deps.getTarget(targetNamespace, name);
  const ours = target !== undefined && target.metadata.annotations?.[Annotations.resourceOwner] === deps.from;
  const twin = source && !isDeleting(source) && selects(deps.names, name) ? deps.ownerTwin(source) : undefined;
  if (!source || !twin) {
    // A copy goes only when its source is known gone: deleting on a cache still listing would make the app's
    // Secret a new object (its watchers see a delete) on every konnector restart or upgrade.
    if (!deps.listed(sourceNamespace)) return { requeueAfterMs: LISTING_RETRY_MS };
    if (ours && !isDeleting(target)) await deps.deleteTarget(targetNamespace, name, target.metadata.uid ?? '');
    else if (!source && !target) await deps.deleteKlutchCopy?.(targetNamespace, name);
    return undefined;
  }
  if (target && !ours) {
    deps.warn(
      source,
      'ClaimConflict',
      `${source.kind} ${targetNamespace}/${name} exists on the ${deps.from === 'Provider' ? 'app cluster' : 'provider'} and is not a copy made by the konnector; rename or remove it so the claimed ${source.kind} can be copied`,
    );
    return undefined;
  }
  const desired = copyOf(source, targetNamespace, twin, deps.from);
  if (target && sameCopy(desired, target)) await acknowledge(deps, source);
  else if (await deps.writeTarget(desired, target)) await acknowledge(deps, source);
  return undefined;
}

/**
 * The bound object `source` belongs to: the one its ownerReference names (`uid` to check; any version of the group,
 * as Kubernetes' garbage collector reads it), or — for the connection Secret Crossplane writes, which the composed
 * resource owns rather than the claim — the claim `<name>` of a source named `<name>-creds`. Undefined for anything else.
 */
export function claimOwner(
  source: { metadata?: { name?: string; ownerReferences?: readonly { kind: string; apiVersion: string; name: string; uid?: string }[] } },
  kind: string,
  group: string,
): { readonly name: string; readonly uid?: string } | undefined {
  const ref = source.metadata?.ownerReferences?.find((r) => r.kind === kind && groupOf(r.apiVersion) === group);
  if (ref) return { name: ref.name, uid: ref.uid };
  const claim = claimOfCredentials(source.metadata?.name ?? '');
  return claim === undefined ? undefined : { name: claim };
}

/** Says which credentials the copy of a Secret holds now, where the deps take receipts and the Secret has any. */
async function acknowledge(deps: ClaimDeps, source: Obj): Promise<void> {
  const receipt = deps.acknowledge && source.kind === 'Secret' ? credentialsReceipt(source.data) : undefined;
  if (receipt) await deps.acknowledge!(source, receipt);
}

const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '');

const selects = (names: readonly string[], name: string): boolean => names.length === 0 || names.includes('*') || names.includes(name);

/**
 * The copy of `source` in `namespace`, owned by `owner`. Labels and annotations under a reserved prefix stay behind
 * (they belong to the platform of the side they were set on); the konnector's own marks are added after.
 */
export function copyOf(source: Obj, namespace: string, owner: Obj, from: ClaimOwner): Obj {
  const out: Obj = {
    apiVersion: source.apiVersion,
    kind: source.kind,
    metadata: {
      name: source.metadata.name,
      namespace,
      labels: { ...withoutReservedKeys(source.metadata.labels), [Annotations.resourceOwner]: from },
      annotations: { ...withoutReservedKeys(source.metadata.annotations), [Annotations.resourceOwner]: from },
      ownerReferences: [ownerReference(owner)],
    },
  };
  for (const f of CONTENT) if (source[f] !== undefined) out[f] = structuredClone(source[f]);
  return out;
}

function sameCopy(desired: Obj, target: Obj): boolean {
  return (
    CONTENT.every((f) => jsonEqual(desired[f], target[f])) &&
    jsonEqual(desired.metadata.labels, target.metadata.labels) &&
    jsonEqual(desired.metadata.annotations, target.metadata.annotations) &&
    jsonEqual(desired.metadata.ownerReferences, target.metadata.ownerReferences)
  );
}
