/**
 * Which binding root namespace an AppClusterBinding gets, and which objects are its own.
 *
 * Klutch names it `klutch-bind-<namespace>-<name>`, which is ambiguous at the dash: `a-prod` in `team` and `prod` in
 * `team-a` both make `klutch-bind-team-a-prod`, and the second would write into (and on deletion delete) the first's
 * bindings. So the name is derived injectively: Klutch's name only where neither part has a dash (then the one dash
 * after the prefix splits it one way), else `klutch-bind-<namespace>-<name>-<hash>` with a hash of `<namespace>/<name>`
 * (two dashes or more after the prefix: never a Klutch-form name). The choice is recorded in `status.rootNamespace`,
 * so it stays put; every object made there carries the AppClusterBinding's uid, and the controller writes into a
 * namespace, or deletes an object, only when it carries that uid.
 */
import { createHash } from 'node:crypto';
import type { AppClusterBinding } from '../../exports/bind-api';

/** Klutch's labels on everything made for an AppClusterBinding, and ours: the uid that says whose it is. */
export const AcbLabels = {
  name: 'klutch.anynines.com/appclusterbinding-name',
  namespace: 'klutch.anynines.com/appclusterbinding-namespace',
  uid: 'klutch-kit.anynines.com/appclusterbinding-uid',
} as const;

/** What every binding root namespace's name starts with (the backend's admission policy holds its writes there). */
export const ROOT_NAMESPACE_PREFIX = 'klutch-bind-';

type Meta = Pick<AppClusterBinding, 'metadata'>;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** Hex characters of sha256(`<namespace>/<name>`) in a hashed name: 64 bits, no collision to be found by trying. */
const HASH_CHARS = 16;

/** Klutch's `klutch-bind-<namespace>-<name>`, whether or not it is unambiguous. */
export const klutchRootNamespace = (acb: Meta): string => `${ROOT_NAMESPACE_PREFIX}${acb.metadata.namespace}-${acb.metadata.name}`;

/** Klutch's name where no other AppClusterBinding can produce it (no dash in namespace or name) and it is a DNS label. */
export function unambiguousKlutchName(acb: Meta): string | undefined {
  const { namespace = '', name = '' } = acb.metadata;
  const n = klutchRootNamespace(acb);
  return !namespace.includes('-') && !name.includes('-') && DNS_LABEL.test(n) ? n : undefined;
}

/** `klutch-bind-<namespace>-<name>-<hash>`, the parts cut to fit 63 characters; the hash makes it injective. */
export function hashedRootNamespace(acb: Meta): string {
  const { namespace = '', name = '' } = acb.metadata;
  const hash = createHash('sha256').update(`${namespace}/${name}`).digest('hex').slice(0, HASH_CHARS);
  const room = 63 - ROOT_NAMESPACE_PREFIX.length - HASH_CHARS - 2;
  // Both parts start with a letter or digit, so neither is empty after the cut and trailing dashes are dropped.
  const ns = namespace.slice(0, Math.min(namespace.length, Math.ceil(room / 2))).replace(/-+$/, '');
  const rest = name
    .replaceAll('.', '-')
    .slice(0, room - ns.length)
    .replace(/-+$/, '');
  return `${ROOT_NAMESPACE_PREFIX}${ns}-${rest}-${hash}`;
}

/**
 * The names this AppClusterBinding may use, in order of preference: Klutch's when unambiguous; Klutch's ambiguous one
 * only to keep a namespace an earlier version made for exactly this AppClusterBinding; the hashed one.
 */
export function rootCandidates(acb: Meta): { readonly klutch?: string; readonly legacy?: string; readonly hashed: string } {
  const klutch = unambiguousKlutchName(acb);
  const legacy = klutchRootNamespace(acb);
  return { ...(klutch ? { klutch } : DNS_LABEL.test(legacy) ? { legacy } : {}), hashed: hashedRootNamespace(acb) };
}

/** Whose an object is, by its labels. */
export type Ownership = 'ours' | 'free' | { readonly owner: string };

/**
 * `ours`: it carries this AppClusterBinding's uid, or (made before the uid label) no uid and exactly its namespace and
 * name labels. Otherwise the owner it names (`<namespace>/<name>`), or that it was not made for an AppClusterBinding.
 */
export function ownership(labels: Record<string, string> | undefined, acb: Meta): Exclude<Ownership, 'free'> {
  const uid = labels?.[AcbLabels.uid];
  const ns = labels?.[AcbLabels.namespace];
  const name = labels?.[AcbLabels.name];
  if (uid) return uid === acb.metadata.uid ? 'ours' : { owner: `AppClusterBinding ${ns}/${name} (uid ${uid})` };
  if (ns === acb.metadata.namespace && name === acb.metadata.name) return 'ours';
  return ns && name ? { owner: `AppClusterBinding ${ns}/${name}` } : { owner: NOT_FOR_AN_ACB };
}

/** The owner of an object that was not made for an AppClusterBinding. */
export const NOT_FOR_AN_ACB = 'nobody: it was not made for an AppClusterBinding';

export const owns = (labels: Record<string, string> | undefined, acb: Meta): boolean => ownership(labels, acb) === 'ours';

/** The outcome of choosing: a namespace to use, or the one wanted and who holds it. */
export type RootChoice = { readonly root: string } | { readonly taken: string; readonly owner: string };

/**
 * Picks the root namespace: the recorded one (when it is one of this AppClusterBinding's names: a status written by
 * anyone else picks nothing), else Klutch's when unambiguous and free or ours, else an earlier version's Klutch-named
 * one made for it, else the hashed one. A namespace held by another is never used. `labelsOf` reads a namespace's
 * labels (`null`: it does not exist).
 */
export async function chooseRoot(
  acb: AppClusterBinding,
  labelsOf: (name: string) => Promise<Record<string, string> | null>,
): Promise<RootChoice> {
  const c = rootCandidates(acb);
  const check = async (name: string): Promise<Ownership> => {
    const labels = await labelsOf(name);
    return labels === null ? 'free' : ownership(labels, acb);
  };
  const use = async (name: string): Promise<RootChoice> => {
    const o = await check(name);
    return typeof o === 'string' ? { root: name } : { taken: name, owner: o.owner };
  };
  const recorded = acb.status?.rootNamespace;
  if (recorded && [c.klutch, c.legacy, c.hashed].includes(recorded)) return use(recorded);
  if (c.klutch && typeof (await check(c.klutch)) === 'string') return { root: c.klutch };
  if (c.legacy && (await check(c.legacy)) === 'ours') return { root: c.legacy };
  return use(c.hashed);
}
