/**
 * The source files that ship, as the repository guards read them (test/repo/imports.test.ts, modules.test.ts): every
 * `.ts`, `.mts` and `.mjs` below a top-level folder, but tests, declaration files, tool state and run output.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Folders that hold no shipped code: dependencies, build and run output, and the suites themselves. */
export const NOT_SHIPPED = new Set(['node_modules', 'dist', '.git', 'bench', 'test', 'coverage']);

/** Every shipped source file below `dir`, as absolute paths. */
export function shippedSources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      // Dot-folders hold tool state and run output (.git, .sandbox with its synth output), not sources.
      if (!NOT_SHIPPED.has(name) && name !== 'testdata' && !name.startsWith('.')) out.push(...shippedSources(path));
    } else if (/\.(ts|mts|mjs)$/.test(name) && !/\.test\.ts$|\.d\.mts$/.test(name)) out.push(path);
  }
  return out;
}
