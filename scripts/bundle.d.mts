/** Types of scripts/bundle.mjs, the one bundle step (see there). */

export interface BundleOptions {
  /** Names the cached file and errors: lower-case letters, digits and '-'. */
  readonly name: string;
  /** The entry module. Exactly one of `entry` and `source` is set. */
  readonly entry?: string;
  /** An entry written in code (TypeScript), resolved from `resolveDir`. */
  readonly source?: { readonly contents: string; readonly resolveDir: string };
  /**
   * Bundle every package too (but esbuild), so the file runs with plain `node` and no node_modules (deployables), or
   * loads faster than from hundreds of package modules (synth). Otherwise packages stay external and the file runs
   * from the cache inside node_modules (benches).
   * @default false
   */
  readonly selfContained?: boolean;
  /**
   * Packages served by another module in this bundle: package name -> file (esbuild's `alias`), for a dependency a
   * program imports but never runs (the function's SDK names grpc-js only for a client it does not use).
   * @default none
   */
  readonly replace?: Readonly<Record<string, string>>;
}

export interface Bundle {
  /** The bundled ES module, in the cache; copy it, never edit it. */
  readonly file: string;
  readonly bytes: number;
  /** Whether it was reused: the inputs esbuild reported last time are unchanged, as scripts/bundle.mjs checks them. */
  readonly cached: boolean;
  /** Every file esbuild read into it but the entry, absolute, sorted: ours and the packages' (below node_modules). */
  readonly inputs: readonly string[];
}

export const REPOSITORY_ROOT: string;
export const CACHE_DIR: string;
export const RELEASE_REGISTRY_ENV: string;
/** The digest of the release's konnector image, set while the backend and plugin are bundled (release/publish.ts). */
export const RELEASE_KONNECTOR_DIGEST_ENV: string;
export function bundle(o: BundleOptions): Promise<Bundle>;
