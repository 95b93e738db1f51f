/**
 * `spec.konnector.overrides`, vetted. Klutch merges every container field an AppClusterBinding sets into the
 * konnector; here the konnector runs on the control plane as `klutch-binder` of its root namespace, which reads the
 * app cluster's kubeconfig, so whoever may write an AppClusterBinding (a team) would run any program there. What may
 * be set is what an operator of a konnector tunes: its resources up to the platform operator's ceiling
 * (`--konnector-max-resources`: a team's konnector shares the control plane's nodes with every other team's) and
 * imagePullPolicy, the flags and environment variables of lib/konnector-tuning.ts, and an image only from the platform
 * operator's list (`--konnector-allowed-images`). Anything else is refused as a whole, with every problem named.
 */
import { imageRepository } from '../../lib/image-reference';
import type { V1EnvVar, V1ResourceRequirements } from '@kubernetes/client-node';
import { quantityToScalar } from '@kubernetes/client-node/dist/util.js';
import type { ContainerOverrides } from '../../exports/bind-api/container';
import { tenantArgProblems, TENANT_KONNECTOR_ENV } from '../../lib/konnector-tuning';

/** The platform operator's say over the konnectors of AppClusterBindings. */
export interface KonnectorPolicy {
  /** --konnector-image: what runs unless an override names another. */
  readonly image: string;
  /** --konnector-allowed-images: exact references, or `<repository>:*` for any tag or digest of one. */
  readonly allowed: readonly string[];
  /** --konnector-max-resources: the most a konnector may request or be limited to, per resource. */
  readonly maxResources?: Readonly<Record<string, string>>;
}

/** The resources a konnector of the control plane may be given: the ones a Pod of the `restricted` level uses. */
export const TUNABLE_RESOURCES = ['cpu', 'memory', 'ephemeral-storage'] as const;
/** What the konnector runs with; an override replaces these key by key (requests.cpu alone keeps limits.cpu). */
export const KONNECTOR_RESOURCES = {
  requests: { cpu: '50m', memory: '128Mi' },
  limits: { cpu: '1', memory: '384Mi' },
} as const satisfies V1ResourceRequirements;
/** --konnector-max-resources' default: twice the konnector's own limit of CPU, about three times its memory. */
export const KONNECTOR_MAX_RESOURCES = { cpu: '2', memory: '1Gi', 'ephemeral-storage': '1Gi' } as const;

/** What of the overrides goes into the container. */
export interface VettedOverrides {
  readonly image: string;
  readonly imagePullPolicy?: string;
  /** The konnector's own, with the override's keys replacing them. */
  readonly resources: { readonly requests: Record<string, string>; readonly limits: Record<string, string> };
  readonly env: readonly V1EnvVar[];
  readonly args: readonly string[];
}

const FIELD = 'spec.konnector.overrides';
/** Fields that may be set; `name` is ignored, as Klutch's: the container is always `konnector`. */
const ALLOWED = new Set(['image', 'imagePullPolicy', 'resources', 'env', 'args', 'name']);

/** Klutch's rule, kept: an empty field is no override. */
const emptyValue = (v: unknown): boolean =>
  v === undefined ||
  v === null ||
  v === '' ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === 'object' && Object.keys(v as object).length === 0);

/** Whether a `--konnector-allowed-images` entry is well formed; a problem otherwise. */
export function imagePatternProblem(p: string): string | undefined {
  const ok = p.endsWith(':*') ? imageRepository(p.slice(0, -2)) === p.slice(0, -2) : imageRepository(p) !== undefined;
  return ok ? undefined : `"${p}" is neither an image reference nor <repository>:*`;
}

export function imageAllowed(image: string, policy: KonnectorPolicy): boolean {
  if (image === policy.image) return true;
  const repo = imageRepository(image);
  return policy.allowed.some((p) => (p.endsWith(':*') ? repo !== undefined && repo === p.slice(0, -2) : image === p));
}

/** The vetted overrides, or every problem, each naming its field and the fix. */
export function vetOverrides(o: ContainerOverrides | undefined, policy: KonnectorPolicy): VettedOverrides | { problems: string[] } {
  const problems: string[] = [];
  const set = Object.entries(o ?? {}).filter(([, v]) => !emptyValue(v));
  for (const [k] of set)
    if (!ALLOWED.has(k))
      problems.push(
        `${FIELD}.${k} may not be set: the konnector runs on the control plane beside the app cluster's kubeconfig, so only its image (from the operator's list), imagePullPolicy, resources, env and args are tuned; remove ${FIELD}.${k}`,
      );
  const image = o?.image || policy.image;
  if (!imageAllowed(image, policy))
    problems.push(
      `${FIELD}.image "${image}" is not an image the platform operator allows (${[policy.image, ...policy.allowed].join(', ')}; the backend's --konnector-image and --konnector-allowed-images); remove ${FIELD}.image, or ask the operator to allow it`,
    );
  const env = o?.env ?? [];
  env.forEach((e, i) => {
    const check = TENANT_KONNECTOR_ENV[e.name];
    const where = `${FIELD}.env[${i}] (${e.name})`;
    if (!check) problems.push(`${where} may not be set: only ${Object.keys(TENANT_KONNECTOR_ENV).join(', ')}; remove it`);
    else if (e.valueFrom || typeof e.value !== 'string') problems.push(`${where} needs a plain value, not valueFrom; write value`);
    else {
      const why = check(e.value);
      if (why) problems.push(`${where} "${e.value}" ${why}; change or remove it`);
    }
  });
  for (const p of tenantArgProblems(o?.args ?? [])) problems.push(`${FIELD}.${p}; change or remove it`);
  const resources = vetResources(o?.resources, policy.maxResources ?? KONNECTOR_MAX_RESOURCES, problems);
  if (problems.length) return { problems };
  return {
    image,
    ...(o?.imagePullPolicy ? { imagePullPolicy: o.imagePullPolicy } : {}),
    resources,
    env,
    args: o?.args ?? [],
  };
}

/** Why `q` is not a quantity a konnector may be given; undefined when it is one. */
export function konnectorQuantityProblem(q: unknown): string | undefined {
  const v = amount(q);
  return typeof v === 'string' ? v : undefined;
}

/** A quantity as a number of its unit, or why it is not one the konnector may be given. */
function amount(q: unknown): number | string {
  if (typeof q !== 'string' && typeof q !== 'number') return 'is not a quantity: write one such as 512Mi or 500m';
  try {
    const v = Number(quantityToScalar(String(q)));
    return Number.isFinite(v) && v >= 0 ? v : 'is not a quantity of zero or more: write one such as 512Mi or 500m';
  } catch {
    // client-node reads a binary suffix on whole numbers only (1.5Gi is not read): say how to write it.
    return 'is not a quantity this platform reads: write it as a whole number of its unit (1536Mi, 500m)';
  }
}

/**
 * The konnector's resources with the override's keys replacing its own, and each problem: a resource other than
 * TUNABLE_RESOURCES (a GPU, hugepages) or a field other than requests and limits, a value that is not a quantity, one
 * above the operator's ceiling, and a request above its limit (which the API server would refuse only at the Pod, so
 * the Deployment would run nothing and say so nowhere the team reads).
 */
function vetResources(
  r: V1ResourceRequirements | undefined,
  max: Readonly<Record<string, string>>,
  problems: string[],
): VettedOverrides['resources'] {
  const at = `${FIELD}.resources`;
  for (const k of Object.keys(r ?? {}))
    if (k !== 'requests' && k !== 'limits' && !emptyValue((r as Record<string, unknown>)[k]))
      problems.push(`${at}.${k} may not be set: only requests and limits are tuned; remove it`);
  const given = { requests: r?.requests ?? {}, limits: r?.limits ?? {} };
  const merged = {
    requests: { ...KONNECTOR_RESOURCES.requests } as Record<string, string>,
    limits: { ...KONNECTOR_RESOURCES.limits } as Record<string, string>,
  };
  for (const part of ['requests', 'limits'] as const)
    for (const [name, q] of Object.entries(given[part])) {
      const where = `${at}.${part}.${name}`;
      if (!(TUNABLE_RESOURCES as readonly string[]).includes(name)) {
        problems.push(`${where} may not be set: a konnector is given only ${TUNABLE_RESOURCES.join(', ')}; remove it`);
        continue;
      }
      const v = amount(q);
      if (typeof v === 'string') {
        problems.push(`${where} "${String(q)}" ${v}`);
        continue;
      }
      const ceiling = max[name];
      const most = amount(ceiling); // checked when the flag is read
      if (ceiling !== undefined && typeof most === 'number' && v > most)
        problems.push(
          `${where} "${String(q)}" is more than the platform operator lets a konnector have (${ceiling}, the backend's --konnector-max-resources); lower it, or ask the operator`,
        );
      merged[part][name] = String(q);
    }
  // The konnector's own values, where the operator's ceiling is lower, are the ceiling: it bounds every konnector.
  for (const part of ['requests', 'limits'] as const)
    for (const [name, q] of Object.entries(merged[part])) {
      const [own, most] = [amount(q), amount(max[name])];
      if (!(name in given[part]) && typeof own === 'number' && typeof most === 'number' && own > most) merged[part][name] = max[name]!;
    }
  for (const [name, q] of Object.entries(merged.requests)) {
    const [request, limit] = [amount(q), amount(merged.limits[name])];
    if (typeof request === 'number' && typeof limit === 'number' && merged.limits[name] !== undefined && request > limit)
      problems.push(
        `${at}.requests.${name} "${q}" is more than its limit (${merged.limits[name]}${name in given.limits ? '' : ", the konnector's own"}); raise ${at}.limits.${name} or lower the request`,
      );
  }
  return merged;
}
