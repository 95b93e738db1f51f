/** Types of scripts/node-runtime.mjs (see there). */
export declare const NODE_VERSION: string;
export declare function ensureNodeRuntime(log: (line: string) => void): { dir: string; node: string; version: string };
export declare function underNode24(scriptUrl: string): void;
export interface NodePackage {
  readonly name: string;
  readonly version: string;
  readonly integrity: string;
  readonly bin: string;
  readonly license: boolean;
}
export declare function ensureNodePackage(
  pkg: NodePackage,
  log: (line: string) => void,
  check?: (node: string) => void,
): { dir: string; node: string };
