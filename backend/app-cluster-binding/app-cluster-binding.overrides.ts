/**
 * `spec.konnector.overrides`, vetted. Klutch merges every container field an AppClusterBinding sets into the
 * konnector; here the konnector runs on the control plane as `klutch-binder` of its root namespace, which reads the
 * app cluster's kubeconfig, so whoever may write an AppClusterBinding (a team) would run any program there. What may
 * be set is what an operator of a konnector tunes: its resources and imagePullPolicy, the flags and environment
 * variables of lib/konnector-tuning.ts, and an image only from the platform operator's list
 * (`--konnector-allowed-images`). Anything else is refused as a whole, with every problem named.
 */
import { imageRepository } from '../../lib/image-reference';
import type { V1EnvVar, V1ResourceRequirements } from '@kubernetes/client-node';
import type { ContainerOverrides } from '../../exports/bind-api/container';
import { tenantArgProblems, TENANT_KONNECTOR_ENV } from '../../lib/konnector-tuning';

/** The platform operator's say over konnector images. */
export interface KonnectorImages {
  /** --konnector-image: what runs unless an override names another. */
  readonly image: string;
  /** --konnector-allowed-images: exact references, or `<repository>:*` for any tag or digest of one. */
  readonly allowed: readonly string[];
}

/** What of the overrides goes into the container. */
export interface VettedOverrides {
  readonly image: string;
  readonly imagePullPolicy?: string;
  readonly resources?: V1ResourceRequirements;
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

export function imageAllowed(image: string, images: KonnectorImages): boolean {
  if (image === images.image) return true;
  const repo = imageRepository(image);
  return images.allowed.some((p) => (p.endsWith(':*') ? repo !== undefined && repo === p.slice(0, -2) : image === p));
}

/** The vetted overrides, or every problem, each naming its field and the fix. */
export function vetOverrides(o: ContainerOverrides | undefined, images: KonnectorImages): VettedOverrides | { problems: string[] } {
  const problems: string[] = [];
  const set = Object.entries(o ?? {}).filter(([, v]) => !emptyValue(v));
  for (const [k] of set)
    if (!ALLOWED.has(k))
      problems.push(
        `${FIELD}.${k} may not be set: the konnector runs on the control plane beside the app cluster's kubeconfig, so only its image (from the operator's list), imagePullPolicy, resources, env and args are tuned; remove ${FIELD}.${k}`,
      );
  const image = o?.image || images.image;
  if (!imageAllowed(image, images))
    problems.push(
      `${FIELD}.image "${image}" is not an image the platform operator allows (${[images.image, ...images.allowed].join(', ')}; the backend's --konnector-image and --konnector-allowed-images); remove ${FIELD}.image, or ask the operator to allow it`,
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
  if (problems.length) return { problems };
  return {
    image,
    ...(o?.imagePullPolicy ? { imagePullPolicy: o.imagePullPolicy } : {}),
    ...(o?.resources && !emptyValue(o.resources) ? { resources: o.resources } : {}),
    env,
    args: o?.args ?? [],
  };
}
