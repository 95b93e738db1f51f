/**
 * The function as one file runnable with plain `node` (no node_modules): esbuild bundles server.ts and every
 * dependency into an ES module; `createRequire` serves the CommonJS packages' `require` of Node built-ins.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));

export interface BundleResult {
  readonly outfile: string;
  readonly bytes: number;
}

export interface BundleOptions {
  /** The directory holding server.ts, for callers that run bundled themselves (benches). @default this file's */
  readonly sourceDir?: string;
}

/** Writes the bundle to `outfile` (an `.mjs`); `node <outfile> --insecure --address 127.0.0.1:9443` serves. */
export async function buildFunctionBundle(outfile: string, o: BundleOptions = {}): Promise<BundleResult> {
  const { build } = await import('esbuild');
  mkdirSync(dirname(outfile), { recursive: true });
  const r = await build({
    stdin: {
      contents: "import { main } from './server';\nmain().catch((e) => { console.error(e); process.exit(1); });\n",
      resolveDir: o.sourceDir ?? HERE,
      sourcefile: 'function-main.ts',
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    outfile,
    metafile: true,
    legalComments: 'none',
    logLevel: 'silent',
    banner: { js: "import { createRequire as __klutchCreateRequire } from 'node:module';\nconst require = __klutchCreateRequire(import.meta.url);" },
  });
  const out = Object.entries(r.metafile.outputs)[0];
  return { outfile, bytes: out ? out[1].bytes : 0 };
}
