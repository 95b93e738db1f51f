/**
 * The APIServiceBinding reconcile: the one writer of a binding's status, and the owner of its lifecycle. A binding
 * is bound step by step (bind.ts) or, once deleted, removed in the order that strands no claim (removal.ts). Either
 * decides an outcome — the conditions to hold and when to look again — which is committed here in one status write
 * at the end, and only when it differs from the cached status.
 */
import { refKey, type ObjectRef, type ReconcileContext, type ReconcileResult } from '../../controller';
import { BINDING_FINALIZER, READY_CONDITION, sameConditions, withSummary, type APIServiceBinding } from '../../exports/bind-api';
import { hasFinalizer, isDeleting } from '../kube/objects';
import { bind } from './bind';
import { SET_WHEN_DECIDED } from './binding.conditions';
import type { BindingDeps, Outcome } from './binding.deps';
import { removeBinding } from './removal';

/** How often a healthy binding's status is refreshed (heartbeat, informers). */
const REFRESH_MS = 60_000;
/** How soon a binding that is not Ready is looked at again, unless a step says otherwise. */
const RETRY_MS = 10_000;

export async function reconcileBinding(d: BindingDeps, ref: ObjectRef, ctx: Pick<ReconcileContext, 'log'>): Promise<ReconcileResult> {
  const key = refKey(ref);
  const b = d.getBinding(ref);
  if (!b) {
    d.setReady(ref, undefined);
    await d.release(key);
    return undefined;
  }
  let outcome: Outcome;
  if (isDeleting(b)) {
    d.setReady(ref, undefined);
    outcome = await removeBinding(d, key, b, ctx);
  } else {
    if (!hasFinalizer(b, BINDING_FINALIZER)) await d.setFinalizers(b, [...(b.metadata.finalizers ?? []), BINDING_FINALIZER]);
    const p = await bind(d, key, b, false, ctx);
    const ready = p.conditions.every((c) => c.status === 'True');
    d.setReady(ref, ready);
    outcome = { status: p, requeueAfterMs: ready ? REFRESH_MS : (p.retryMs ?? RETRY_MS) };
  }
  if (outcome.status) await commitStatus(d, ref, b, outcome.status);
  return outcome.requeueAfterMs === undefined ? undefined : { requeueAfterMs: outcome.requeueAfterMs };
}

/** Writes the status when it says something the cached one does not. */
async function commitStatus(d: BindingDeps, ref: ObjectRef, b: APIServiceBinding, s: NonNullable<Outcome['status']>): Promise<void> {
  const undecided = (type: string) => SET_WHEN_DECIDED.includes(type) && !s.conditions.some((c) => c.type === type);
  const held = b.status?.conditions?.filter((c) => !undecided(c.type));
  const conditions = withSummary(held, s.conditions, READY_CONDITION, d.now());
  const samePrettyName = s.prettyName === undefined || s.prettyName === b.status?.providerPrettyName;
  if (samePrettyName && sameConditions(conditions, b.status?.conditions)) return;
  await d.writeStatus(ref, { ...(s.prettyName ? { providerPrettyName: s.prettyName } : {}), conditions });
}
