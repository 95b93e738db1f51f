/**
 * Which hop holds a claim, read from the conditions the control plane wrote on it (Crossplane's Synced and Ready, the
 * data service's DataServiceReady in the backend's words, and what else the backend reports): the one reading that
 * the konnector writes into the claim's Ready condition in the app cluster and `kubectl bind why` prints, so the two
 * never say different things. Pure.
 */
import { bindingReasonMeans } from './binding-reasons';

export interface ClaimCondition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
  readonly lastTransitionTime?: string;
}

/** The hops between an app developer's claim and its data, in the order a claim passes them. */
type Hop = 'binding' | 'konnector' | 'control plane' | 'data service' | 'claim';

/** What holds a claim at one hop: the condition that says so (its type, reason, words) and what to do. */
export interface Hold {
  readonly hop: Hop;
  readonly reason: string;
  /** The words of the hop: `Synced False (ReconcileError): cannot compose …`. */
  readonly said: string;
  readonly todo: string;
  /** Since when, where the hop says (the condition's lastTransitionTime). */
  readonly since?: string;
}

/**
 * The reason of a DataServiceReady the composition function writes when the claim names another that has no data
 * service (Recipe errorsFrom.absent: a binding's instance): the control plane finds the claim's own reference wrong.
 */
export const REFERENCE_NOT_FOUND = 'ReferenceNotFound';

/**
 * The reason of a DataServiceReady the composition function writes when a ResourceQuota of the claim's namespace on
 * the control plane refuses what the backend makes for it (Diagnostics.volumes: its volumes): the platform's limit on
 * the tenant, as the konnector names a claim the quota refuses itself.
 */
export const QUOTA_EXCEEDED = 'QuotaExceeded';

/**
 * The reason of a DataServiceReady the composition function writes while the backend runs another object before this
 * one (Recipe.queue: a backup of the same instance).
 */
export const QUEUED = 'Queued';

/**
 * The reason of a DataServiceReady the composition function writes when the API server refused a change of the data
 * service because the backend's operator did not answer its admission webhook (Recipe errorAdvice `reason`): the
 * operator is down, and nothing of the data service changes until it is back.
 */
export const OPERATOR_UNAVAILABLE = 'OperatorUnavailable';

/**
 * The reason of a DataServiceReady the composition function writes when a Backup waits for its instance's WAL
 * archiving and the backend says archiving fails (the `reason` of a Recipe `waitsFor.advice` rule): the object store,
 * or the way to it, is the platform operator's.
 */
export const ARCHIVING_FAILING = 'ArchivingFailing';

const REFERENCE_TODO =
  'the claim names another claim this namespace does not have (or not yet): create that one, or correct the field the message names';
const QUOTA_TODO =
  "the claim's namespace on the control plane has a quota that what the claim needs exceeds: delete a claim you no longer need, choose a smaller plan, or ask the platform operator for more";
const CONTROL_PLANE_TODO =
  'the control plane cannot compose the claim (Crossplane, its composition function or a managed resource): the message says why; a spec the platform refuses is yours to fix, anything else is for the platform operator';
const PROVISIONING_TODO = "the backend's operator is still making it: wait, the message says what it does";
const FAILED_TODO = "the backend's operator reports a failure: the message says what failed and what to do";
const QUEUED_TODO =
  "the backend's operator runs these one at a time and starts this one once the one named is done: wait; if that one does not end, the platform operator looks at it";
const OPERATOR_TODO =
  "the backend's operator does not answer, so nothing of the data service can be made or changed: wait, the claim goes on by itself once it is back; if it stays so, the platform operator brings the operator back";
const ARCHIVING_TODO =
  "the instance cannot archive its WAL to the platform's object store, and no backup starts before it does: the platform operator mends the store, the way to it or the instance's keys there (the message says which it can tell); the claim goes on by itself once archiving works";
const OTHER_TODO = 'the data service reports a problem beside its readiness: the message says what to do';
const BINDING_TODO =
  "this cluster's binding of the API is not Ready, so the claim's changes and status do not travel: a cluster administrator reads why with kubectl bind why <resource>/<name> or on the binding's own conditions; what this cluster runs is its administrator's to fix, the control plane the platform operator's";

const WAITING_TODO =
  'the control plane has the claim and has not reported on it yet: wait a few seconds; if it stays so, the platform operator should look at Crossplane';

/**
 * The Ready condition of binding `name`, when it is not True, as what holds every claim of the binding that is not
 * Ready: its reason and what that means, never its message (lib/binding-reasons.ts).
 */
export function bindingHold(name: string, ready: ClaimCondition): Hold | undefined {
  if (ready.status === 'True') return undefined;
  const reason = ready.reason || 'BindingNotReady';
  const means = bindingReasonMeans(reason);
  return {
    hop: 'binding',
    reason,
    said: `APIServiceBinding ${name} is not Ready (${reason})${means ? `: ${means}` : ''}`,
    todo: BINDING_TODO,
    ...(ready.lastTransitionTime ? { since: ready.lastTransitionTime } : {}),
  };
}

/** A condition as one line: `Synced False (ReconcileError): cannot compose …`. */
export const saidOf = (c: ClaimCondition): string =>
  `${c.type} ${c.status}${c.reason ? ` (${c.reason})` : ''}${c.message ? `: ${c.message}` : ''}`;

/** What a condition that is not True means, by its type; undefined for a True one. `Ready` itself is not a cause. */
export function conditionHold(c: ClaimCondition): Hold | undefined {
  if (c.status === 'True' || c.type === 'Ready') return undefined;
  const base = { reason: c.reason || c.type, said: saidOf(c), ...(c.lastTransitionTime ? { since: c.lastTransitionTime } : {}) };
  switch (c.type) {
    case 'Synced':
      return { hop: 'control plane', ...base, todo: CONTROL_PLANE_TODO };
    case 'DataServiceReady':
      if (c.reason === REFERENCE_NOT_FOUND) return { hop: 'control plane', ...base, todo: REFERENCE_TODO };
      if (c.reason === QUOTA_EXCEEDED) return { hop: 'control plane', ...base, todo: QUOTA_TODO };
      if (c.reason === QUEUED) return { hop: 'data service', ...base, todo: QUEUED_TODO };
      if (c.reason === OPERATOR_UNAVAILABLE) return { hop: 'data service', ...base, todo: OPERATOR_TODO };
      if (c.reason === ARCHIVING_FAILING) return { hop: 'data service', ...base, todo: ARCHIVING_TODO };
      return { hop: 'data service', ...base, todo: c.reason === 'Provisioning' ? PROVISIONING_TODO : FAILED_TODO };
    default:
      return { hop: 'data service', ...base, todo: OTHER_TODO };
  }
}

/** The order a claim's conditions are read in: Crossplane's first, then the data service's, then the rest, then Ready. */
export const conditionOrder = (type: string): number => ['Synced', 'DataServiceReady'].indexOf(type) + 1 || (type === 'Ready' ? 9 : 5);

/**
 * What holds a claim with these conditions, if it is not Ready: the first cause in `conditionOrder`; a Ready False
 * with no other cause is the control plane's (Crossplane waits for its composed resources); no conditions at all is
 * the control plane's too, not answered yet. Undefined when the claim is Ready.
 */
export function holdOf(conditions: readonly ClaimCondition[]): Hold | undefined {
  const ready = conditions.find((c) => c.type === 'Ready');
  if (ready?.status === 'True') return undefined;
  const cause = [...conditions]
    .sort((a, b) => conditionOrder(a.type) - conditionOrder(b.type))
    .map(conditionHold)
    .find((h) => h !== undefined);
  if (cause) return cause;
  if (ready)
    return {
      hop: 'control plane',
      reason: ready.reason || 'NotReady',
      said: saidOf(ready),
      todo: CONTROL_PLANE_TODO,
      ...(ready.lastTransitionTime ? { since: ready.lastTransitionTime } : {}),
    };
  return { hop: 'control plane', reason: 'Waiting', said: 'no status: the control plane has not answered for it yet', todo: WAITING_TODO };
}

/** The Ready condition that names `hold`: what the app developer reads with kubectl get or describe. */
export function readyCondition(hold: Hold, at: string): ClaimCondition & { lastTransitionTime: string } {
  return {
    type: 'Ready',
    status: 'False',
    reason: hold.reason,
    message: `held by the ${hold.hop}: ${hold.said.replace(/\.+$/, '')}. What to do: ${hold.todo}`,
    lastTransitionTime: hold.since ?? at,
  };
}

type Status = { conditions?: ClaimCondition[] } & Record<string, unknown>;
const isConditions = (v: unknown): v is ClaimCondition[] =>
  Array.isArray(v) && v.every((c) => typeof c === 'object' && c !== null && typeof (c as ClaimCondition).type === 'string');

/**
 * The status as the app cluster shows it: the control plane's, with its Ready condition naming the hop that holds
 * the claim (`at`: the time a Ready condition that did not exist is said to begin, a stable one such as the claim's
 * creation, so that the same status always reads the same). `binding`: the binding's hold, which comes before the
 * claim's own (bindingHold). A Ready True, or a status whose conditions are not a list of conditions, stays as it is:
 * a claim that is Ready stays Ready while its binding is not, for its data still serves.
 */
export function withHold(status: unknown, at: string, binding?: Hold): unknown {
  const s = (typeof status === 'object' && status !== null && !Array.isArray(status) ? status : {}) as Status;
  const conditions = s.conditions ?? [];
  if (!isConditions(conditions)) return status;
  const own = holdOf(conditions);
  if (!own) return status;
  const hold = binding ?? own;
  const ready = conditions.find((c) => c.type === 'Ready');
  const since = binding ? binding.since : ready?.lastTransitionTime;
  const named = readyCondition({ ...hold, ...(since ? { since } : {}) }, at);
  return { ...s, conditions: [...conditions.filter((c) => c.type !== 'Ready'), named] };
}
