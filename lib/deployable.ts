/**
 * What a part says of the program it ships, beside its constructs (`<part>/deploy/deployable.ts`): synth bundles each
 * into `dist/<name>/<name>.mjs` with a Dockerfile beside it (synth/deployables.ts assembles them).
 */
export interface Deployable {
  /** `function` → dist/function/function.mjs. */
  readonly name: string;
  /** The process entry, relative to the repository root. */
  readonly entry: string;
  /** What it is, for synth's progress line and the Dockerfile. */
  readonly description: string;
  /** Ports the image exposes, with what each serves. */
  readonly ports: readonly { readonly port: number; readonly serves: string }[];
  /**
   * More paths in the image that start the program (a small executable `entrypoint` beside the bundle), for
   * manifests written for another image: Klutch's start its backend as `/example-backend` or `/ko-app/example-backend`.
   */
  readonly entrypoints?: readonly string[];
  /**
   * Node and V8 flags the image starts the program with (before the bundle), and environment variables it sets: the
   * settings a program is measured with (bench/function starts the bundle with the same ones).
   */
  readonly runtime?: { readonly nodeOptions?: readonly string[]; readonly env?: Readonly<Record<string, string>> };
  /** Packages the bundle serves from a module of ours instead (scripts/bundle.mjs `replace`; paths from the root). */
  readonly replace?: Readonly<Record<string, string>>;
}
