/** Types of scripts/node-runtime.mjs (see there). */
export declare const NODE_VERSION: string;
export declare function ensureNodeRuntime(log: (line: string) => void): { dir: string; node: string; version: string };
export declare function underNode24(scriptUrl: string): void;
