/**
 * The claims' JSON Schemas and TypeScript types (issue 36, item 6) as an app developer's tools use them: a standard
 * draft-07 validator (what yaml-language-server and kubeconform run) takes every example claim of the catalog and
 * refuses what the API server refuses; the TypeScript compiler takes the examples typed as the generated types and
 * refuses a misspelt field.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Ajv } from 'ajv';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api, CrossplaneTarget } from '../apis/api';
import { loadCatalog } from '../harness/crossplane/catalog';
import { claimTypeFiles, SCHEMAS_DIR } from './claim-schemas';
import { exampleClaim, render } from './synth';

let apis: Api[];
beforeAll(async () => {
  apis = await loadCatalog();
});
const schemasOf = (target: CrossplaneTarget) =>
  new Map([...render({ apis, outdir: 'unused', target })].filter(([path]) => path.startsWith(`${SCHEMAS_DIR}/`)));
const examples = () => apis.flatMap((api) => (Object.keys(api.examples) as (keyof Api['examples'])[]).map((b) => exampleClaim(api, b)));
const schemaFile = (claim: Record<string, unknown>) => {
  const [group, version] = String(claim.apiVersion).split('/');
  return `${SCHEMAS_DIR}/${group}/${String(claim.kind).toLowerCase()}_${version}.json`;
};

describe.each(['v1', 'v2'] as const)('the JSON Schemas of %s', (target) => {
  it('take every example claim of the catalog and refuse an unknown field, a wrong type and another kind, as a plain draft-07 validator reads them', () => {
    const schemas = schemasOf(target);
    expect(schemas.size).toBe(apis.length);
    const ajv = new Ajv({ strict: false, allErrors: true });
    for (const claim of examples()) {
      const text = schemas.get(schemaFile(claim));
      expect(text, schemaFile(claim)).toBeDefined();
      const validate = ajv.compile(JSON.parse(text!) as object);
      const check = (o: unknown) => (validate(o) ? 'valid' : ajv.errorsText(validate.errors));
      expect(check(claim), `${String(claim.kind)} ${JSON.stringify(claim.spec)}`).toBe('valid');
      const spec = claim.spec as Record<string, unknown>;
      expect(check({ ...claim, spec: { ...spec, sepc: 1 } })).toMatch(/must NOT have additional properties/);
      expect(check({ ...claim, spec: { ...spec, compositionRef: 'a9s' } })).toMatch(/spec\/compositionRef must be object/);
      expect(check({ ...claim, kind: 'Other' })).toMatch(/kind must be equal to one of the allowed values/);
    }
  });
});

describe("the v2 composites' schemas", () => {
  it("hold Crossplane v2's machinery under spec.crossplane, as its composite CRD does, and nothing else there", () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const claim = examples().find((c) => c.kind === 'PostgresqlInstance')!;
    const validate = ajv.compile(JSON.parse(schemasOf('v2').get(schemaFile(claim))!) as object);
    const check = (crossplane: object) =>
      validate({ ...claim, spec: { ...(claim.spec as object), crossplane } }) ? 'valid' : ajv.errorsText(validate.errors);
    expect(check({ compositionUpdatePolicy: 'Manual', compositionRef: { name: 'postgresql' } })).toBe('valid');
    expect(check({ compositionUpdatePolicy: 'Sometimes' })).toMatch(/compositionUpdatePolicy must be equal to one of the allowed values/);
    expect(check({ writeConnectionSecretToRef: { name: 'x' } })).toMatch(/crossplane must NOT have additional properties/);
  });
});

describe('the TypeScript types', () => {
  const dir = mkdtempSync(join(tmpdir(), 'klutch-kit-types-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('type every example claim, and the compiler refuses a misspelt field', async () => {
    for (const [path, text] of await claimTypeFiles(schemasOf('v1'))) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    const lines = examples().map((claim, i) => {
      const module = schemaFile(claim)
        .replace(SCHEMAS_DIR, './types')
        .replace(/\.json$/, '');
      return `import type { ${String(claim.kind)} as T${i} } from '${module}';\nexport const c${i}: T${i} = ${JSON.stringify(claim)};`;
    });
    lines.push(
      "import type { PostgresqlInstance } from './types/anynines.com/postgresqlinstance_v1';",
      "export const typo: PostgresqlInstance = { apiVersion: 'anynines.com/v1', kind: 'PostgresqlInstance', spec: { service: 'a9s-postgresql15', plan: 'postgresql-single-nano', sevrice: 'x' } };",
    );
    writeFileSync(join(dir, 'claims.ts'), lines.join('\n'));
    const program = ts.createProgram([join(dir, 'claims.ts')], {
      strict: true,
      noEmit: true,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
    });
    const errors = ts
      .getPreEmitDiagnostics(program)
      .map(
        (d) =>
          `${d.file ? ts.getLineAndCharacterOfPosition(d.file, d.start!).line + 1 : '?'}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`,
      );
    // Only the last line, the misspelt field: every example (2 lines each) compiles as its type.
    const last = lines.join('\n').split('\n').length;
    expect(errors).toEqual([expect.stringMatching(new RegExp(`^${last}: .*'sevrice' does not exist`))]);
  }, 120_000); // the TypeScript compiler's program over the types: seconds, more on a loaded machine
});
