/**
 * What synth's bundle has in place of prettier (scripts/synth.mjs `replace`): json-schema-to-typescript imports it
 * to format what it writes, and synth calls it with `format: false` (synth/claim-schemas.ts), so prettier, a large
 * part of a bundle that loads on every run, would only be read, never run.
 */
export function format(): never {
  throw new Error('synth does not format generated types: prettier is not in its bundle (synth/prettier-unused.ts)');
}
