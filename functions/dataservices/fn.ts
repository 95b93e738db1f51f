/**
 * The dataservices composition function: one step, one composed resource per data service, everything it needs in
 * the step's input (a recipe). It never throws: a bad request or input, or a recipe that does not fit the composite,
 * becomes a Fatal result "cannot <verb> <thing>: <cause>" naming the field and the composition.
 */
import {
  Ready,
  Severity,
  Status,
  Target,
  to,
  type ComposeFunction,
  type FunctionHandler,
  type Resource,
  type RunFunctionRequest,
  type RunFunctionResponse,
} from '@crossplane-org/function-sdk-typescript';
import { ADOPT_REQUIREMENT, adoptWrapped } from './adopt';
import {
  companionInput,
  companionResourceName,
  type Composed,
  ComposeError,
  composedResourceName,
  composeResource,
  compositionName,
  listHas,
  trustedComposite,
  applyField,
  claimRef,
  type Generation,
} from './compose';
import type { Input } from '../../recipe';
import {
  statusCondition,
  diagnose,
  DIAGNOSTICS_REQUIREMENT,
  diagnosticsSelector,
  QUOTA_REQUIREMENT,
  VOLUMES_REQUIREMENT,
  volumesMade,
  volumesSelector,
  quotaSelector,
  type Said,
  volumeQuota,
  volumesToMake,
  type DiagnosticsSelector,
  errorElsewhere,
  ERRORS_FROM_REQUIREMENT,
  foundFor,
  gate,
  type Gate,
  WAITING_TTL,
  WAITS_FOR_REQUIREMENT,
} from './diagnostics';
import { QUEUE_REQUIREMENT, queuedBehind, queueSelector, waitsItsTurn } from './queue';
import { get, set } from '../../lib/fieldpath';
import { LIVE_REQUIREMENT, liveObject, liveRequirement } from './live';
import { composeRelated, RELATED_REQUIREMENT } from './related';
import { selectInput } from './select-input';
import { advised, CONDITION_TYPE, observeStatus, shownConditions, type StatusOutcome } from './status';
import { validateInput } from './validate-input';
import { expiryOf, ttlUntil } from './expiry';
import { VALUE_FROM_REQUIREMENT, valueFrom, type ValueFound, writeValue } from './value-from';
import { planRotation, type RotationPlan } from './rotation';
import { applyRestore, BACKUPS_REQUIREMENT, planRestore, type RestorePlan, restoreStatus, RESTORES_REQUIREMENT } from './restore';

type Obj = Record<string, unknown>;

/** How long Crossplane may cache a response: the backend's status is copied on each run, so keep it short. */
export const TTL = { seconds: 60, nanos: 0 };

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A Fatal result, which stops Crossplane's composition and marks the composite Synced False, and the same words as
 * its DataServiceReady condition: a Klutch claim shows only its composite's claim conditions, so without it the app
 * developer (and through the konnector, the app cluster) would never read why.
 */
function fail(rsp: RunFunctionResponse, message: string): RunFunctionResponse {
  rsp.results.push({ severity: Severity.SEVERITY_FATAL, message, reason: 'ComposeResources', target: Target.TARGET_COMPOSITE });
  rsp.conditions.push({
    type: CONDITION_TYPE,
    status: Status.STATUS_CONDITION_FALSE,
    reason: 'CannotCompose',
    message,
    target: Target.TARGET_COMPOSITE_AND_CLAIM,
  });
  return rsp;
}

/**
 * The response while the resource waits for another object (Recipe.waitsFor): nothing composed, the composite not
 * Ready, the claim saying what it waits for (and what to do, under the advice's reason, where the object says it will
 * not come by waiting); Crossplane asked for the object again and looks again after the short TTL (the object's
 * change does not wake the composite).
 */
function waitForGate(rsp: RunFunctionResponse, input: Input, g: Gate): RunFunctionResponse {
  const r = rsp.requirements;
  rsp.requirements = {
    extraResources: { ...(r?.extraResources ?? {}), ...(g.selector ? { [WAITS_FOR_REQUIREMENT]: g.selector } : {}) },
    resources: r?.resources ?? {},
    schemas: r?.schemas ?? {},
  };
  if (rsp.meta) rsp.meta.ttl = WAITING_TTL;
  const message = `${input.backend} ${input.service}: ${g.text ?? 'waiting'}`;
  return nothingComposed(rsp, g.advice?.reason || 'Provisioning', g.advice ? `${message}; ${g.advice.advice}` : message);
}

/** The response with the resource not desired: the composite not Ready, the claim's DataServiceReady False, saying why. */
function nothingComposed(rsp: RunFunctionResponse, reason: string, message: string): RunFunctionResponse {
  const desired = rsp.desired as NonNullable<RunFunctionResponse['desired']>;
  desired.composite = {
    resource: isObj(desired.composite?.resource) ? desired.composite.resource : {},
    connectionDetails: desired.composite?.connectionDetails ?? {},
    ready: Ready.READY_FALSE,
  };
  rsp.conditions.push({
    type: CONDITION_TYPE,
    status: Status.STATUS_CONDITION_FALSE,
    reason,
    message,
    target: Target.TARGET_COMPOSITE_AND_CLAIM,
  });
  return rsp;
}

/** `2026-12-05T23:00:00Z`: an expiry as the claim's author wrote it, to the second. */
const isoOf = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * The response once the credentials expired (Recipe.expiresAt): the resource is not desired, so Crossplane deletes it
 * and its connection Secret (the konnector then removes the app cluster's copy); the claim says since when and what
 * to do.
 */
function expired(rsp: RunFunctionResponse, input: Input, at: number): RunFunctionResponse {
  return nothingComposed(
    rsp,
    'Expired',
    `${input.backend} ${input.service}: expired at ${isoOf(at)}: its credentials are revoked; set a later spec.expiresAt for new ones, or delete the claim`,
  );
}

/** A response for a request `to()` cannot read (fuzzed, truncated): the tag if there is one, and no desired state. */
function fallbackResponse(req: unknown): RunFunctionResponse {
  const tag = isObj(req) && isObj(req.meta) && typeof req.meta.tag === 'string' ? req.meta.tag : '';
  return {
    meta: { tag, ttl: TTL },
    desired: { composite: undefined, resources: {} },
    results: [],
    conditions: [],
    context: undefined,
    requirements: undefined,
  };
}

/** The response for a request, starting from `to(req, TTL)` so earlier steps' desired state passes through. */
function startResponse(req: RunFunctionRequest): RunFunctionResponse {
  try {
    const rsp = to(req, TTL);
    if (!rsp.desired) rsp.desired = { composite: undefined, resources: {} };
    if (!isObj(rsp.desired.resources)) rsp.desired.resources = {};
    return rsp;
  } catch {
    return fallbackResponse(req);
  }
}

/** Composes into `rsp`; any error is a Fatal result. */
const compose: ComposeFunction = (req, rsp) => {
  try {
    return composeInto(req, rsp);
  } catch (e) {
    return fail(rsp, `cannot compose the data service: ${e instanceof Error ? e.message : String(e)}`);
  }
};

function composeInto(req: RunFunctionRequest, rsp: RunFunctionResponse): RunFunctionResponse {
  const composite = req?.observed?.composite?.resource;
  // A Selection (the v2 target) names the input of the composition the composite asks for; anything else is an Input.
  const selected = selectInput(req?.input, composite);
  if (!selected.ok) return fail(rsp, selected.error);
  const rawInput = selected.input;
  const partial = isObj(rawInput) ? rawInput : {};
  const comp = compositionName(composite, {
    backend: typeof partial.backend === 'string' ? (partial.backend as 'a9s') : undefined,
    service: typeof partial.service === 'string' ? partial.service : undefined,
  });
  const v = validateInput(rawInput);
  if (!v.ok) return fail(rsp, `cannot validate the input of composition ${comp}: ${v.errors.join('; ')}`);
  const input = v.input;
  if (!isObj(composite)) return fail(rsp, `cannot get the observed composite resource (composition ${comp}): the request has none`);

  // Credentials with a lifetime (Recipe.expiresAt): not composed once it has passed, so Crossplane deletes them.
  const now = Date.now();
  let expires: number | undefined;
  try {
    expires = input.expiresAt ? expiryOf(composite, input.expiresAt, `(composition ${comp})`) : undefined;
  } catch (e) {
    if (e instanceof ComposeError) return fail(rsp, e.message);
    throw e;
  }
  if (expires !== undefined && expires <= now) return expired(rsp, input, expires);

  const observed = req.observed?.resources?.[composedResourceName(input)]?.resource;
  // Not composed before the object it waits for is ready (Recipe.waitsFor); asked only until first observed.
  let gated: Gate | undefined;
  if (input.waitsFor && !isObj(observed)) {
    try {
      gated = gate(input.waitsFor, composite, extraResources(req, WAITS_FOR_REQUIREMENT), `(composition ${comp})`);
    } catch (e) {
      if (e instanceof ComposeError) return fail(rsp, e.message);
      throw e;
    }
    if (!gated.open) return waitForGate(rsp, input, gated);
  }
  let composed;
  let adoption;
  let related;
  let asked;
  let valued: ValueFound | undefined;
  let restore: RestorePlan;
  let rotation: RotationPlan | undefined;
  let companions: {
    name: string;
    own: Input;
    composed: Composed;
    observed: Obj | undefined;
    ready: boolean;
    /** It holds the claim's readiness only by failing (CompanionWhen.observed, a rotation's second slot). */
    failsOnly: boolean;
  }[];
  try {
    const seen = isObj(observed) ? observed : undefined;
    // Credentials that rotate (rotation.ts): the generation each slot holds, and the slot whose creds are published.
    rotation = input.rotation ? planRotationOf(req, input, composite, seen, now, `(composition ${comp})`) : undefined;
    const stamp = (slot: 0 | 1): Generation | undefined =>
      rotation && input.rotation ? { annotation: input.rotation.annotation, value: rotation.generations[slot] } : undefined;
    composed = composeResource(input, composite, seen, undefined, now, stamp(0));
    // A v2 composite taking over an object the v1 one made keeps the generated values it holds (live.ts); one renewed
    // after it expired (its last run said Expired) keeps none: the old Secret may still exist, and without the expiry
    // stamp if it expired before provider-kubernetes applied it.
    const renewed = statusCondition(composite, CONDITION_TYPE)?.reason === 'Expired';
    asked = renewed ? undefined : liveRequirement(input, composed.resource, composite, seen, `(composition ${comp})`);
    const live = liveObject(extraResources(req, LIVE_REQUIREMENT), asked);
    if (live) composed = composeResource(input, composite, seen, live, now, stamp(0));
    // The second slot's creds are the published ones: the connection details name its object (Rotation.switched).
    if (rotation?.published === 1 && input.rotation) {
      const trusted = trustedComposite(composite, `(composition ${comp})`);
      const target = composed.resource;
      input.rotation.switched.forEach((f, i) => applyField(target, f, i, trusted, `(composition ${comp})`, 'rotation.switched'));
    }
    adoption = adoptWrapped(
      input,
      composed.resource,
      isObj(observed) ? observed : undefined,
      requiredResources(req),
      `(composition ${comp})`,
    );
    // The related list goes where the recipe's fields go: into the wrapped object, if there is one.
    const at = input.wrapper?.manifestAt;
    const main = (at ? get(composed.resource, at) : composed.resource) as Obj;
    const seenMain = at ? get(seen, at) : seen;
    // A restore in place (Recipe.restoredBy): the resource left out while the one made before goes, then made anew.
    restore = planRestore(
      input,
      composite,
      seen,
      readyNow(input, seen),
      extraResources(req, RESTORES_REQUIREMENT),
      extraResources(req, BACKUPS_REQUIREMENT),
      `(composition ${comp})`,
    );
    if (restore.from) applyRestore(input, main, restore.from, `(composition ${comp})`);
    // Made anew: the list the resource had before (kept with the restore) is the one its items continue.
    const keptList = !isObj(seenMain) && restore.state?.related && input.related ? restore.state.related : undefined;
    const before: Obj | undefined = keptList ? {} : undefined;
    if (before && input.related && keptList) set(before, input.related.to, structuredClone(keptList));
    related = composeRelated(
      input,
      main,
      composite,
      before ?? seenMain,
      extraResources(req, RELATED_REQUIREMENT),
      `(composition ${comp})`,
      now,
    );
    // A value another object holds (a load balancer's address), asked on every run: it may come late or change.
    if (input.valueFrom) {
      valued = valueFrom(input.valueFrom, composite, extraResources(req, VALUE_FROM_REQUIREMENT), `(composition ${comp})`);
      writeValue(input.valueFrom, main, valued);
    }
    companions = (input.companions ?? []).flatMap((c) => {
      const name = companionResourceName(input, c);
      const seenC = req.observed?.resources?.[name]?.resource;
      const seen = isObj(seenC) ? seenC : undefined;
      // Not yet wanted (Companion.when): not composed, and not waited for.
      if (c.when && !seen && !listHas(c.when.observed ? observed : main, c.when)) return [];
      // A rotation's second slot exists from the first rotation on (Rotation.second).
      const slot = input.rotation?.second === c.name;
      if (slot && !rotation?.second) return [];
      const own = companionInput(input, c);
      const made = composeResource(own, composite, seen, undefined, now, slot ? stamp(1) : undefined);
      // Like one that waits for the backend's state, it holds the claim only by failing: the creds work meanwhile.
      const failsOnly = slot || c.when?.observed === true;
      return [{ name, own, composed: made, observed: seen, ready: false, failsOnly }];
    });
  } catch (e) {
    if (e instanceof ComposeError) return fail(rsp, e.message);
    throw e;
  }
  let outcome: StatusOutcome;
  try {
    outcome = observeStatus(input, isObj(observed) ? observed : undefined);
  } catch (e) {
    return fail(rsp, `cannot map the status of ${composed.name} (composition ${comp}): ${(e as Error).message}`);
  }
  // The claim is Ready when every companion is too (Crossplane's rule for the composite); one that cannot be applied
  // (its Synced False) says why. The main resource's own readiness is its own.
  let ownReady = outcome.ready;
  for (const c of companions) {
    const seen = observeStatus(c.own, c.observed);
    // One that waited for the backend's state (CompanionWhen.observed), or a second slot, holds the claim only by failing.
    c.ready = seen.ready || (c.failsOnly && seen.condition?.status !== 'False');
    if (c.ready) continue;
    // The main resource's own failure or progress speaks first; else the companion's, else that it waits for it.
    const waits: StatusOutcome['condition'] = {
      status: 'False',
      reason: 'Provisioning',
      message: `${input.backend} ${input.service}: waiting for its ${c.own.resource.kind}`,
    };
    const condition =
      outcome.condition?.status === 'False' ? outcome.condition : seen.condition?.status === 'False' ? seen.condition : waits;
    outcome = { ...outcome, ready: false, condition };
  }
  // An error the backend reports about the resource on another object (diagnostics.ts): asked on every run once
  // observed, since the resource itself may look Ready. A failure of the resource's own wins.
  let elsewhere: DiagnosticsSelector | undefined;
  if (input.errorsFrom && isObj(observed)) {
    let e;
    try {
      e = errorElsewhere(input.errorsFrom, composite, extraResources(req, ERRORS_FROM_REQUIREMENT), `(composition ${comp})`);
    } catch (err) {
      if (err instanceof ComposeError) return fail(rsp, err.message);
      throw err;
    }
    elsewhere = e.selector;
    const own = outcome.condition?.status === 'False' && outcome.condition.reason !== 'Provisioning';
    if (e.said && !own) {
      const message = `${input.backend} ${input.service}: ${e.said.text}`;
      outcome = { ...outcome, ready: false, condition: { status: 'False', reason: e.said.reason, message } };
    }
    // The resource fails and the object it depends on is not there at all: that absence is the cause (the claim's
    // reference), said instead of the resource's own words about what it could not read.
    if (e.absent && own) {
      const message = `${input.backend} ${input.service}: ${e.absent.text}`;
      outcome = { ...outcome, ready: false, condition: { status: 'False', reason: e.absent.reason, message } };
      if (rsp.meta) rsp.meta.ttl = WAITING_TTL;
    }
    // The resource is not Ready while the backend reports an error about it (the composite is not either).
    if (e.said) ownReady = false;
    // The object's change does not wake the composite: while it fails, Crossplane looks again after the short TTL.
    if (e.said && rsp.meta) rsp.meta.ttl = WAITING_TTL;
  }
  // Why it waits, where the backend does not say (diagnostics.ts): asked while observed, not Ready and not failing.
  let waiting: DiagnosticsSelector | undefined;
  let quotas: DiagnosticsSelector | undefined;
  let claims: DiagnosticsSelector | undefined;
  const progressing = !outcome.condition || outcome.condition.reason === 'Provisioning';
  if (input.diagnostics && isObj(observed) && !outcome.ready && progressing) {
    try {
      waiting = diagnosticsSelector(input.diagnostics, composite, `(composition ${comp})`);
    } catch (e) {
      if (e instanceof ComposeError) return fail(rsp, e.message);
      throw e;
    }
    // Volumes still to make (a replica's after the primary's): a quota of the namespace may refuse them, which only
    // the backend's log says. Named before what the Pods say: a refused volume is why a replica's join Pod cannot be
    // scheduled ("persistentvolumeclaim not found").
    const volumes = input.diagnostics.volumes;
    const at = input.wrapper?.manifestAt;
    const resource = (at ? get(composed.resource, at) : composed.resource) as Obj;
    const reported = volumes ? get(observed, volumes.madeAt) : undefined;
    // Asked while the backend's own count says volumes remain: the same answer in every run until that count moves,
    // so Crossplane's requirements settle. The volume claims found correct a count the backend has yet to write.
    const remain = volumes ? volumesToMake(volumes, resource, reported) : [];
    quotas = waiting && remain.length ? quotaSelector(waiting) : undefined;
    claims = quotas && waiting && volumes?.labelled ? volumesSelector(waiting) : undefined;
    const toMake =
      volumes && remain.length
        ? volumesToMake(volumes, resource, volumesMade(reported, claims, extraResources(req, VOLUMES_REQUIREMENT)))
        : [];
    const said =
      (quotas && volumeQuota(toMake, quotas, extraResources(req, QUOTA_REQUIREMENT))) ||
      (waiting && diagnose(input.diagnostics, waiting, extraResources(req, DIAGNOSTICS_REQUIREMENT)));
    if (said) outcome = sayingAlso(outcome, input, said, (m) => advised(m, input.errorAdvice));
    // A Pod's change does not wake the composite: Crossplane looks again after the TTL.
    if (waiting && rsp.meta) rsp.meta.ttl = WAITING_TTL;
  }
  // What it waits behind, where the backend runs one at a time (queue.ts): asked while observed and waiting.
  let queued: DiagnosticsSelector | undefined;
  const own = input.queue && isObj(observed) ? get(observed, input.queue.observedAt) : undefined;
  if (
    input.queue &&
    waitsItsTurn(input.queue, own) &&
    !outcome.ready &&
    (!outcome.condition || outcome.condition.reason === 'Provisioning')
  ) {
    try {
      queued = queueSelector(input.queue, composite, `(composition ${comp})`);
    } catch (e) {
      if (e instanceof ComposeError) return fail(rsp, e.message);
      throw e;
    }
    const said = queued && queuedBehind(input.queue, own, queued, extraResources(req, QUEUE_REQUIREMENT));
    if (said) outcome = sayingAlso(outcome, input, said);
    // Another object's change does not wake the composite: Crossplane looks again after the TTL.
    if (queued && rsp.meta) rsp.meta.ttl = WAITING_TTL;
  }

  const restoring = restore.state && restore.state.phase !== 'Restored' ? restore.state : undefined;
  if (restoring) {
    // Until the instance is made anew and ready, the claim says it is being restored, unless the backend fails it.
    const failing = outcome.condition?.status === 'False' && outcome.condition.reason !== 'Provisioning';
    if (restore.omit || !failing)
      outcome = {
        ...outcome,
        ready: false,
        condition: { status: 'False', reason: 'Restoring', message: `${input.backend} ${input.service}: ${restoring.message}` },
      };
    ownReady = false;
  }
  if ((restoring || restore.waiting) && rsp.meta) rsp.meta.ttl = WAITING_TTL;
  const restoreAsks = Object.keys(restore.requirements).length > 0;
  if (
    adoption.requirement ||
    related.requirement ||
    asked ||
    waiting ||
    quotas ||
    queued ||
    elsewhere ||
    gated?.selector ||
    valued?.selector ||
    restoreAsks
  ) {
    const r = rsp.requirements;
    rsp.requirements = {
      extraResources: {
        ...(r?.extraResources ?? {}),
        ...(related.requirement ? { [RELATED_REQUIREMENT]: related.requirement } : {}),
        ...(asked ? { [LIVE_REQUIREMENT]: asked } : {}),
        ...(waiting ? { [DIAGNOSTICS_REQUIREMENT]: waiting } : {}),
        ...(quotas ? { [QUOTA_REQUIREMENT]: quotas } : {}),
        ...(claims ? { [VOLUMES_REQUIREMENT]: claims } : {}),
        ...(queued ? { [QUEUE_REQUIREMENT]: queued } : {}),
        ...(elsewhere ? { [ERRORS_FROM_REQUIREMENT]: elsewhere } : {}),
        ...(valued?.selector ? { [VALUE_FROM_REQUIREMENT]: valued.selector } : {}),
        // Asked as long as before, so that Crossplane's requirements settle in the run that composes.
        ...(gated?.selector ? { [WAITS_FOR_REQUIREMENT]: gated.selector } : {}),
        ...restore.requirements,
      },
      resources: { ...(r?.resources ?? {}), ...(adoption.requirement ? { [ADOPT_REQUIREMENT]: adoption.requirement } : {}) },
      schemas: r?.schemas ?? {},
    };
  }
  const desired = rsp.desired as NonNullable<RunFunctionResponse['desired']>;
  const resource: Resource = {
    resource: composed.resource,
    connectionDetails: {},
    ready: ownReady ? Ready.READY_TRUE : Ready.READY_FALSE,
  };
  // Left out while the resource made before a restore is deleted (Crossplane deletes what is not desired).
  desired.resources = restore.omit ? { ...desired.resources } : { ...desired.resources, [composed.name]: resource };
  for (const c of companions) {
    desired.resources[c.name] = {
      resource: c.composed.resource,
      connectionDetails: {},
      ready: c.ready ? Ready.READY_TRUE : Ready.READY_FALSE,
    };
  }
  // Only status of a desired composite is honoured: write a fresh partial composite (never the observed one),
  // keeping what earlier steps asked for.
  const before = isObj(desired.composite?.resource) ? (desired.composite?.resource as Obj) : {};
  const beforeStatus = isObj(before.status) ? before.status : {};
  const status = structuredClone({ ...beforeStatus, ...((outcome.composite.status as Obj | undefined) ?? {}) });
  // The restore acted on is kept in the composite, written on every run (what a run leaves out, Crossplane removes).
  const kept = restoreStatus(restore);
  if (kept && input.restoredBy) set({ status }, input.restoredBy.statusAt, kept);
  if (rotation && input.rotation) set({ status }, input.rotation.statusAt, rotation.state);
  // A rotation waits for its new user: looked at again soon (the instance's Cluster does not wake the composite).
  if (rotation?.waiting && rsp.meta) rsp.meta.ttl = WAITING_TTL;
  if (Object.keys(status).length > 0 || desired.composite) {
    desired.composite = {
      resource: { ...before, ...(Object.keys(status).length ? { status } : {}) },
      connectionDetails: desired.composite?.connectionDetails ?? {},
      ready: restoring ? Ready.READY_FALSE : (desired.composite?.ready ?? Ready.READY_UNSPECIFIED),
    };
  }
  for (const w of composed.warnings)
    rsp.results.push({
      severity: Severity.SEVERITY_WARNING,
      message: w,
      reason: 'IgnoredParameter',
      target: Target.TARGET_COMPOSITE_AND_CLAIM,
    });
  // The backend's conditions the claim shows beside DataServiceReady (Recipe.shownConditions).
  for (const c of shownConditions(input, isObj(observed) ? observed : undefined)) {
    rsp.conditions.push({
      type: c.type,
      status:
        c.status === 'True'
          ? Status.STATUS_CONDITION_TRUE
          : c.status === 'False'
            ? Status.STATUS_CONDITION_FALSE
            : Status.STATUS_CONDITION_UNKNOWN,
      reason: c.reason ?? c.type,
      ...(c.message ? { message: c.message } : {}),
      target: Target.TARGET_COMPOSITE_AND_CLAIM,
    });
  }
  // Looked at again when the resource's or a related composite's credentials expire, if that is before the TTL.
  const soonest = [expires, related.nextExpiry, rotation?.wakeAt].filter((t): t is number => t !== undefined);
  if (rsp.meta && soonest.length) rsp.meta.ttl = ttlUntil(rsp.meta.ttl ?? TTL, Math.min(...soonest), now);
  if (expires !== undefined && outcome.condition?.status === 'True' && !outcome.condition.message)
    outcome = {
      ...outcome,
      condition: { ...outcome.condition, message: `${input.backend} ${input.service}: its credentials expire at ${isoOf(expires)}` },
    };
  if (rotation?.message && outcome.condition?.status === 'True' && !outcome.condition.message)
    outcome = { ...outcome, condition: { ...outcome.condition, message: `${input.backend} ${input.service}: ${rotation.message}` } };
  if (outcome.condition) {
    rsp.conditions.push({
      type: CONDITION_TYPE,
      status: outcome.condition.status === 'True' ? Status.STATUS_CONDITION_TRUE : Status.STATUS_CONDITION_FALSE,
      reason: outcome.condition.reason,
      ...(outcome.condition.message ? { message: outcome.condition.message } : {}),
      target: Target.TARGET_COMPOSITE_AND_CLAIM,
    });
  }
  return rsp;
}

/** The rotation's plan for this run (rotation.ts), from the observed slots and the objects errorsFrom found. */
function planRotationOf(
  req: RunFunctionRequest,
  input: Input,
  composite: Obj,
  seen: Obj | undefined,
  now: number,
  where: string,
): RotationPlan {
  const r = input.rotation as NonNullable<Input['rotation']>;
  const second = req.observed?.resources?.[companionResourceName(input, { name: r.second })]?.resource;
  const selector = input.errorsFrom ? diagnosticsSelector(input.errorsFrom, composite, where, 'errorsFrom') : undefined;
  const claimName = claimRef(trustedComposite(composite, where)).name ?? '';
  return planRotation(r, {
    composite: trustedComposite(composite, where),
    claimName,
    observed: [seen, isObj(second) ? second : undefined],
    found: selector ? foundFor(selector, extraResources(req, ERRORS_FROM_REQUIREMENT)) : undefined,
    now,
    where,
  });
}

/** Whether the observed resource is ready by the recipe's status rules (false where they cannot read it). */
function readyNow(input: Input, observed: Obj | undefined): boolean {
  try {
    return observed !== undefined && observeStatus(input, observed).ready;
  } catch {
    return false;
  }
}

/** What Crossplane found for the adoption requirement; undefined until the function asked (adopt.ts). */
function requiredResources(req: RunFunctionRequest): Obj[] | undefined {
  const found = req.requiredResources?.[ADOPT_REQUIREMENT];
  if (!found) return undefined;
  return (found.items ?? []).map((i) => i.resource).filter(isObj);
}

/** What Crossplane found for an extra-resources requirement (related.ts); undefined until the function asked. */
/** The outcome saying also what another object says (`said`), after the backend's progress, with its reason. */
function sayingAlso(outcome: StatusOutcome, input: Input, said: Said, advise = (m: string) => m): StatusOutcome {
  const before = outcome.condition?.message;
  const message = before ? `${before}; ${said.text}` : `${input.backend} ${input.service}: ${said.text}`;
  return { ...outcome, condition: { status: 'False', reason: said.reason, message: advise(message) } };
}

function extraResources(req: RunFunctionRequest, key: string): Obj[] | undefined {
  const found = req.extraResources?.[key];
  if (!found) return undefined;
  return (found.items ?? []).map((i) => i.resource).filter(isObj);
}

/** One run, in process: never throws, always answers with the request's tag. */
export function runFunction(req: RunFunctionRequest): RunFunctionResponse {
  const rsp = startResponse(req);
  try {
    return compose(req, rsp as Parameters<ComposeFunction>[1]) as RunFunctionResponse;
  } catch (e) {
    return fail(rsp, `cannot compose the data service: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** The handler the gRPC server runs (FunctionRunner expects a FunctionHandler). */
export const dataServicesFunction: FunctionHandler = {
  async RunFunction(req: RunFunctionRequest): Promise<RunFunctionResponse> {
    return runFunction(req);
  },
};
