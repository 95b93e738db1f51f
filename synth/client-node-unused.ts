/**
 * What synth's bundle has in place of @kubernetes/client-node (scripts/synth.mjs `replace`). Synth renders files and
 * talks to no cluster, but exports/bind-api/client.ts, which the constructs reach through exports/bind-api, builds its
 * patch options with client-node when it loads: loading client-node (hundreds of ES modules) was most of synth's
 * start. Types are erased; an import of anything else from client-node fails the bundle, naming this file, but for
 * its quantity parser (`dist/util.js`, a module that imports nothing), which scripts/synth.mjs bundles as it is.
 */

/** client-node's values (its dist/patch.js), so the options built at load read as they would. */
export const PatchStrategy = {
  JsonPatch: 'application/json-patch+json',
  MergePatch: 'application/merge-patch+json',
  StrategicMergePatch: 'application/strategic-merge-patch+json',
  ServerSideApply: 'application/apply-patch+yaml',
} as const;

/** Options that no call of synth's ever receives: a header, with no middleware that could send it. */
export function setHeaderOptions(key: string, value: string): { readonly unused: string } {
  return { unused: `synth sends no requests (synth/client-node-unused.ts): ${key}: ${value}` };
}
