/**
 * Restores in place (`Recipe.restoredBy`): an instance whose backend restores only by making it anew from a backup.
 * The function asks Crossplane for the composite's restore and backup composites (as related.ts asks for bindings,
 * in the same trusted scope) and decides, from them, the composite's kept state (`statusAt`) and the observed
 * resource, what this run composes. Pure: no SDK calls, no I/O.
 *
 * A restore is acted on once, oldest first, once its backup is done (until then it is shown `waiting`): `Deleting` while the resource made
 * before is still observed (left out of the desired state, so Crossplane deletes it); `Recovering` once it is made
 * anew (the restore's fields set, its uid as `annotation`); `Restored` once that resource is ready. The kept state
 * carries the backup's name, so a restore deleted half-way still completes, and the resource keeps being composed as
 * it was made. It also carries the related list the deleted resource had (an instance's roles, revoked ones
 * included), so that what was revoked before the restore is revoked in the resource made anew.
 */
import type { Input, RelatedMatch, RestoredBy } from '../../recipe';
import { get, set, unset } from '../../lib/fieldpath';
import { applyField, claimRef, ComposeError, trustedComposite } from './compose';
import { inScope, relatedSelector, type RelatedSelector } from './related';

type Obj = Record<string, unknown>;

/** The keys of the two requirements (extra resources, as related.ts asks). */
export const RESTORES_REQUIREMENT = 'restores';
export const BACKUPS_REQUIREMENT = 'restore-backups';

export type RestorePhase = 'Deleting' | 'Recovering' | 'Restored';

/** What the composite keeps of the restore it acts on (at `statusAt`). */
export interface RestoreState {
  /** The restore's claim name, and its composite's uid and creation time (restores are taken in that order). */
  readonly name: string;
  readonly uid: string;
  readonly created: string;
  /** The backup's claim name (the backend's backup object has it), and its id as the backend names it. */
  readonly backup: string;
  readonly backupId: string;
  readonly phase: RestorePhase;
  readonly message: string;
  /** The related list of the resource made before (RelatedList.to), kept while it is made anew. */
  readonly related?: readonly Obj[];
}

/** A newer restore that waits for its backup, beside the state (which it does not change until it starts). */
export interface RestoreWaiting {
  readonly name: string;
  readonly backup: string;
  readonly message: string;
}

export interface RestorePlan {
  readonly requirements: Readonly<Record<string, RelatedSelector>>;
  /** The restore acted on (nothing: no restore has started). */
  readonly state?: RestoreState;
  readonly waiting?: RestoreWaiting;
  /** The resource is left out: the one made before is being deleted. */
  readonly omit: boolean;
  /** The resource is composed from this restore (`clear`, `fields`, `annotation`). */
  readonly from?: RestoreState;
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const PHASES: readonly string[] = ['Deleting', 'Recovering', 'Restored'];

/** The state kept in the observed composite; a malformed one (someone edited it) is treated as none. */
function keptState(r: RestoredBy, composite: Obj): RestoreState | undefined {
  const s = get(composite, r.statusAt);
  if (!isObj(s)) return undefined;
  const [name, uid, created, backup, backupId, phase] = ['name', 'uid', 'created', 'backup', 'backupId', 'phase'].map((k) => str(s[k]));
  if (!name || !uid || !created || !backup || !backupId || !phase || !PHASES.includes(phase)) return undefined;
  const related = Array.isArray(s.related) ? s.related.filter(isObj) : undefined;
  const message = str(s.message) ?? '';
  return { name, uid, created, backup, backupId, phase: phase as RestorePhase, message, ...(related ? { related } : {}) };
}

/** Found composites in the selector's scope, not being deleted, that match every condition (their trusted view). */
function matching(found: readonly Obj[], sel: RelatedSelector, match: readonly RelatedMatch[], trusted: Obj): Obj[] {
  return found
    .filter((o) => inScope(o, sel) && !get(o, 'metadata.deletionTimestamp'))
    .map((o) => trustedComposite(o, `(${sel.kind} ${String(get(o, 'metadata.name'))})`))
    .filter((o) =>
      match.every((m) => {
        const want = m.from !== undefined ? get(trusted, m.from) : m.equals;
        return typeof want === 'string' && want !== '' && get(o, m.path) === want;
      }),
    );
}

/** Restores are taken by creation time, then name: `a` comes after the restore acted on (`s`). */
const createdOf = (o: Obj): string => str(get(o, 'metadata.creationTimestamp')) ?? '';
const nameOf = (o: Obj): string => claimRef(o).name ?? '';
const after = (o: Obj, s: RestoreState): boolean =>
  get(o, 'metadata.uid') !== s.uid && (createdOf(o).localeCompare(s.created) || nameOf(o).localeCompare(s.name)) > 0;

/**
 * The plan for this run. `observed` is the composed resource as Crossplane observed it (a wrapper, with the object
 * it holds at `manifestAt` as asked and at `restoredBy.observedAt` as it exists), `observedReady` whether it is ready
 * by the recipe's rules. `restores`/`backups` are what Crossplane found (undefined until it answered: nothing new
 * starts then). Once the resource is composed anew it is never left out again: the one made before may still be
 * terminating (provider-kubernetes then waits for it to go), and leaving out the new one would delete it.
 */
export function planRestore(
  input: Input,
  composite: Obj,
  observed: Obj | undefined,
  observedReady: boolean,
  restores: readonly Obj[] | undefined,
  backups: readonly Obj[] | undefined,
  where: string,
): RestorePlan {
  const r = input.restoredBy;
  if (!r) return { requirements: {}, omit: false };
  const restoreSel = relatedSelector(r.restores, composite, where);
  const backupSel = relatedSelector(r.backups, composite, where);
  const requirements = { [RESTORES_REQUIREMENT]: restoreSel, [BACKUPS_REQUIREMENT]: backupSel };
  const trusted = trustedComposite(composite, where);
  let state = keptState(r, composite);
  let waiting: RestoreWaiting | undefined;

  // A newer restore is taken up once the one before is done, never two at once; it starts once its backup is done.
  if ((!state || state.phase === 'Restored') && restores !== undefined) {
    const next = matching(restores, restoreSel, r.restores.match, trusted)
      .filter((o) => !state || after(o, state))
      .sort((a, b) => createdOf(a).localeCompare(createdOf(b)) || nameOf(a).localeCompare(nameOf(b)))[0];
    if (next) {
      const name = nameOf(next);
      const backup = str(get(next, r.restores.backupFrom));
      if (!backup) throw new ComposeError(`cannot restore from ${r.restores.kind} ${name} ${where}: it has no ${r.restores.backupFrom}`);
      const done = backups === undefined ? undefined : doneBackup(r, backups, backupSel, trusted, backup);
      const backupId = str(get(done, r.backups.idFrom));
      if (done && backupId) {
        const message = `restoring from backup ${backup} (restore ${name})`;
        const uid = String(get(next, 'metadata.uid'));
        state = { name, uid, created: createdOf(next), backup, backupId, phase: 'Deleting', message };
      } else {
        waiting = { name, backup, message: `restore ${name} waits for backup ${backup} to be a completed backup of this instance` };
      }
    }
  }
  const base = { requirements, ...(waiting ? { waiting } : {}) };
  if (!state) return { ...base, omit: false };

  const seen = observed && !get(observed, 'metadata.deletionTimestamp') ? observed : undefined;
  if (state.phase === 'Deleting' && seen) {
    // The resource made before is still observed: left out until it is gone, its related list kept for the new one.
    const target = input.wrapper ? get(seen, input.wrapper.manifestAt) : seen;
    const list = input.related ? get(target, input.related.to) : undefined;
    const related = Array.isArray(list) ? list.filter(isObj) : state.related;
    const message = `restoring from backup ${state.backup} (restore ${state.name}): removing the instance made before`;
    return { ...base, state: { ...state, phase: 'Deleting', message, ...(related ? { related } : {}) }, omit: true };
  }
  // Made for this restore: the object as it exists carries the restore's uid and is not the one made before, going.
  const live = get(seen, r.observedAt);
  const made = get(live, `metadata.annotations[${r.annotation}]`) === state.uid && !get(live, 'metadata.deletionTimestamp');
  if (state.phase === 'Restored' || (made && observedReady)) {
    const { related: _done, ...restored } = state;
    const message = `restored from backup ${state.backup} (restore ${state.name})`;
    return { ...base, state: { ...restored, phase: 'Restored', message }, omit: false, from: state };
  }
  const message = `restoring from backup ${state.backup} (restore ${state.name}): recovering the instance from it`;
  return { ...base, state: { ...state, phase: 'Recovering', message }, omit: false, from: state };
}

/** The backup named `name` if it is one of this composite's and done. */
function doneBackup(r: RestoredBy, found: readonly Obj[], sel: RelatedSelector, trusted: Obj, name: string): Obj | undefined {
  return matching(found, sel, r.backups.match, trusted).find(
    (o) => claimRef(o).name === name && get(o, r.backups.done.path) === r.backups.done.equals,
  );
}

/** Sets what a restore changes on the resource made anew (`target`: the wrapped object, for a wrapper). */
export function applyRestore(input: Input, target: Obj, from: RestoreState, where: string): void {
  const r = input.restoredBy;
  if (!r) return;
  for (const path of r.clear) unset(target, path);
  const source = { name: from.name, uid: from.uid, backup: from.backup, backupId: from.backupId };
  r.fields.forEach((f, i) => applyField(target, f, i, source, where, 'restoredBy.fields'));
  set(target, `metadata.annotations[${r.annotation}]`, from.uid);
}

/** What goes into the composite's status at `statusAt`: the restore acted on, and one that waits. */
export function restoreStatus(p: RestorePlan): Obj | undefined {
  if (!p.state && !p.waiting) return undefined;
  return { ...(p.state ? structuredClone(p.state) : {}), ...(p.waiting ? { waiting: { ...p.waiting } } : {}) };
}
