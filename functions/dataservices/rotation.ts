/**
 * Credentials that rotate with an overlap (`Recipe.rotation`): a binding has two slots, each its own user, and the
 * state its composite keeps (`statusAt`) says which slot is current. From that state, the composite's own fields and
 * what the backend reports (the instance's Cluster, found as `errorsFrom` finds it), one run decides what it composes:
 * the generation each slot's object holds, whether the second slot exists yet, which slot's credentials are
 * published, and the state to keep. Pure but for `now`. docs/decisions/cnpg-rotation.md.
 *
 * The generations: the first slot holds generation 0 until the first rotation, which gives the second slot
 * generation 1; every rotation after gives the other slot the next one. A slot's object keeps a generated value
 * only while it is stamped with that slot's generation, so a slot made current again gets a new password.
 */
import type { Rotation } from '../../recipe';
import { credentialsReceipt } from '../../lib/credentials-receipt';
import { get } from '../../lib/fieldpath';
import { ComposeError } from './compose';
import { errorAt } from './diagnostics';

type Obj = Record<string, unknown>;

/** What the composite keeps (at `Rotation.statusAt`). */
export interface RotationState {
  /** Rotations done: the current slot is `generation % 2`. */
  readonly generation: number;
  /** The last value of the composite's `requestedFrom` acted on (or found at the start, which asks for nothing). */
  readonly requested?: string;
  /** When the last rotation began (RFC 3339). */
  readonly rotatedAt?: string;
  /** When the current slot's credentials were published (its user worked). */
  readonly publishedAt?: string;
  /**
   * When the previous slot's user is revoked: the overlap after the current slot's credentials reached the app
   * cluster (a konnector's receipt, Rotation.receivedFrom), or after their publication where no receipt comes.
   */
  readonly retiresAt?: string;
}

export type Slot = 0 | 1;

export interface RotationPlan {
  readonly state: RotationState;
  /** The slot whose object holds the newest generation. */
  readonly current: Slot;
  /** The slot whose credentials `<claim>-creds` has. */
  readonly published: Slot;
  /** The generation each slot's object is to hold ('0' needs no stamp: objects made before rotations hold it). */
  readonly generations: readonly [string, string];
  /** Whether the second slot's companion is composed. */
  readonly second: boolean;
  /** A rotation waits for its new user to work: look again soon. */
  readonly waiting: boolean;
  /** The next time something changes by the clock (the overlap's end, the schedule), in ms. */
  readonly wakeAt?: number;
  /** What the claim says about it, if anything. */
  readonly message?: string;
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const isoOf = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const UNIT_MS: Readonly<Record<string, number>> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration (`90m`, `12h`, `30d`) in ms; throws, naming the field, for anything else. */
export function durationMs(v: unknown, field: string, where: string): number {
  const m = typeof v === 'string' ? /^([1-9][0-9]{0,5})([mhd])$/.exec(v) : null;
  if (!m) throw new ComposeError(`cannot read ${field} ${where}: "${String(v)}" is not a duration such as 90m, 12h or 30d`);
  return Number(m[1]) * (UNIT_MS[m[2] as string] as number);
}

/** The state kept in the composite; a malformed one (someone edited it) counts as none. */
export function keptRotation(statusAt: string, composite: unknown): RotationState | undefined {
  const s = get(composite, statusAt);
  if (!isObj(s) || typeof s.generation !== 'number' || !Number.isInteger(s.generation) || s.generation < 0) return undefined;
  const times = ['rotatedAt', 'publishedAt', 'retiresAt'].map((k) => str(s[k]));
  if (times.some((t) => t !== undefined && Number.isNaN(Date.parse(t)))) return undefined;
  const [rotatedAt, publishedAt, retiresAt] = times;
  const requested = str(s.requested);
  return {
    generation: s.generation,
    ...(requested ? { requested } : {}),
    ...(rotatedAt ? { rotatedAt } : {}),
    ...(publishedAt ? { publishedAt } : {}),
    ...(retiresAt ? { retiresAt } : {}),
  };
}

/** Which slots of a kept state have a user that may log in at `now` (the instance's side, RelatedList.rotation). */
export function liveSlots(state: RotationState | undefined, now: number): { readonly live: readonly Slot[]; readonly until?: number } {
  const generation = state?.generation ?? 0;
  const current = (generation % 2) as Slot;
  if (generation === 0) return { live: [0] };
  const retires = state?.retiresAt ? Date.parse(state.retiresAt) : undefined;
  if (retires !== undefined && retires <= now) return { live: [current] };
  return { live: [0, 1], ...(retires !== undefined ? { until: retires } : {}) };
}

/** The inputs of a run: the composite (its trusted view), its claim's name, the observed objects, and the backend's. */
export interface RotationInputs {
  readonly composite: Obj;
  readonly claimName: string;
  /** The observed resource (first slot) and companion (second slot), as Crossplane last saw them. */
  readonly observed: readonly [Obj | undefined, Obj | undefined];
  /** The objects errorsFrom found (the instance's Cluster); undefined until asked. */
  readonly found: readonly Obj[] | undefined;
  readonly now: number;
  readonly where: string;
}

export function planRotation(r: Rotation, i: RotationInputs): RotationPlan {
  const { composite, now, where } = i;
  const requested = str(get(composite, r.requestedFrom));
  const everySet = get(composite, r.everyFrom);
  const every = everySet === undefined || everySet === null ? undefined : durationMs(everySet, r.everyFrom, where);
  const overlapSet = get(composite, r.overlapFrom);
  const overlapText = overlapSet === undefined || overlapSet === null ? r.overlap : overlapSet;
  const overlap = durationMs(overlapText, r.overlapFrom, where);

  // The first run finds what is asked already: a claim made with a request asks for no rotation.
  let state: RotationState = keptRotation(r.statusAt, composite) ?? { generation: 0, ...(requested ? { requested } : {}) };
  const settled = state.generation === 0 || (state.retiresAt !== undefined && Date.parse(state.retiresAt) <= now);
  const since = state.rotatedAt ?? str(get(composite, 'metadata.creationTimestamp'));
  const dueAt = every !== undefined && since !== undefined ? Date.parse(since) + every : undefined;
  const asked = requested !== undefined && requested !== state.requested;
  if (settled && (asked || (dueAt !== undefined && dueAt <= now))) {
    state = { generation: state.generation + 1, ...(requested ? { requested } : {}), rotatedAt: isoOf(now) };
  }

  const generation = state.generation;
  const current = (generation % 2) as Slot;
  const generations: [string, string] =
    current === 0 ? [String(generation), String(Math.max(generation - 1, 0))] : [String(generation - 1), String(generation)];
  const users = r.works.users.map((u) => u.replace('%s', i.claimName)) as [string, string];
  // The new slot's user works once the backend applied the slot's object as observed, stamped with its generation:
  // its credentials are published. (A state kept before publishedAt existed has only retiresAt.)
  let publishedAt = state.publishedAt ?? (state.retiresAt !== undefined ? state.rotatedAt : undefined);
  if (generation > 0 && publishedAt === undefined && works(r, i, current, generations[current], users[current])) {
    publishedAt = isoOf(now);
    state = { ...state, publishedAt };
  }
  // The overlap runs once they reached the app cluster: a konnector's receipt names them, or none is to come.
  const receipt = r.receivedFrom !== undefined ? str(get(composite, r.receivedFrom)) : undefined;
  const held = r.credentialsAt !== undefined ? credentialsReceipt(get(i.observed[current], r.credentialsAt), 'plain') : undefined;
  const arrived = receipt === undefined || receipt === held;
  if (generation > 0 && publishedAt !== undefined && state.retiresAt === undefined && arrived) {
    state = { ...state, retiresAt: isoOf(now + overlap) };
  }
  const published: Slot = generation === 0 || publishedAt !== undefined ? current : ((1 - current) as Slot);
  const waiting = generation > 0 && publishedAt === undefined;
  const retires = state.retiresAt ? Date.parse(state.retiresAt) : undefined;
  const nextDue = every !== undefined ? Date.parse(state.rotatedAt ?? since ?? isoOf(now)) + every : undefined;
  const wakes = [retires, nextDue].filter((t): t is number => t !== undefined && t > now);
  const previous = users[(1 - current) as Slot];
  const refusal = waiting ? refused(r, i, users[current]) : undefined;
  const message = waiting
    ? `rotating its credentials: the new user ${users[current]} is not working yet${refusal ? ` (${refusal})` : ''}; ${previous}'s credentials keep working meanwhile`
    : generation > 0 && retires === undefined
      ? `its credentials were rotated at ${state.rotatedAt}: the konnector has yet to copy them into the app cluster; ${previous}'s keep working until ${String(overlapText)} after they arrive`
      : retires !== undefined && retires > now
        ? `its credentials were rotated at ${state.rotatedAt}: ${previous}'s keep working until ${state.retiresAt}`
        : undefined;
  return {
    state,
    current,
    published,
    generations,
    second: generation > 0,
    waiting,
    ...(wakes.length ? { wakeAt: Math.min(...wakes) } : {}),
    ...(message ? { message } : {}),
  };
}

/** Whether the slot's user works: its object as observed holds `generation`, and the backend applied that version. */
function works(r: Rotation, i: RotationInputs, slot: Slot, generation: string, user: string): boolean {
  const object = get(i.observed[slot], r.observedAt);
  if (!isObj(object)) return false;
  const stamp = str(get(object, `metadata.annotations[${r.annotation}]`)) ?? '0';
  const version = str(get(object, 'metadata.resourceVersion'));
  if (stamp !== generation || !version) return false;
  const applied = r.works.applied.replace('%s', user);
  return (i.found ?? []).some((o) => {
    const listed = get(o, r.works.reconciled);
    return get(o, applied) === version && Array.isArray(listed) && listed.includes(user);
  });
}

/** What the backend says about the user it cannot make (`works.refused`), as `<kind> <name>: <its words>`. */
function refused(r: Rotation, i: RotationInputs, user: string): string | undefined {
  if (!r.works.refused) return undefined;
  const at = r.works.refused.replace('%s', user);
  for (const o of i.found ?? []) {
    const said = errorAt(o, at);
    if (said) return `${String(get(o, 'kind'))} ${String(get(o, 'metadata.name'))} cannot reconcile ${user}: ${said}`;
  }
  return undefined;
}
