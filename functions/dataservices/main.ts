/** The function's process entry: what dist/function/function.mjs runs (synth/deployables.ts bundles it). */
import { main } from './server';

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
