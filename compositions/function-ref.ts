/** The composition function every Composition calls, by package reference. */
import { Names } from '../lib/names';
import { releasePackage } from '../lib/version';

/** Our function's package, as pushed by `crossplane xpkg push` (see README). */
export const DEFAULT_FUNCTION_PACKAGE = releasePackage('function-dataservices');

export interface FunctionPackage {
  /** Full reference with registry and tag or digest. */
  readonly ref: string;
  /** `functionRef.name` in Compositions: the name Crossplane gives the installed package. */
  readonly name: string;
  /** The reference without tag or digest, for `dependsOn`. */
  readonly repository: string;
  /** The tag (`v1.2.3`), for the `dependsOn` version constraint; empty for a digest reference. */
  readonly tag: string;
}

export function functionPackage(ref: string = DEFAULT_FUNCTION_PACKAGE): FunctionPackage {
  const at = ref.indexOf('@');
  const base = at >= 0 ? ref.slice(0, at) : ref;
  const colon = base.lastIndexOf(':');
  const hasTag = colon > base.lastIndexOf('/');
  const repository = hasTag ? base.slice(0, colon) : base;
  const name = Names.packageName(ref);
  if (!name)
    throw new Error(`function package "${ref}": cannot derive a package name; use a reference like registry/org/function-name:v1.0.0`);
  return { ref, name, repository, tag: hasTag ? base.slice(colon + 1) : '' };
}
