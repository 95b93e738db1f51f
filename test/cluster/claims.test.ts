/**
 * Claim validation on a real API server (issue 4).
 *
 * Every synthesized XRD is turned into its composite and claim CRDs with Crossplane's own conversion (ported in
 * test/support/xcrd.ts), installed on a real kube-apiserver, and then every claim case of test/cases/<api>.cases.ts
 * is sent to it: create cases as server-side dry runs with strict field validation, update cases as a JSON merge
 * patch on a stored claim. The API server evaluates the schema and the CEL rules for real.
 *
 * Alongside, every CEL rule of every XRD is tracked in both directions: a rule is "rejected" when an invalid case's
 * error names it (its field path and message), and "accepted" when an accepted claim evaluated it (a create or changed
 * node for plain rules, an update that keeps the node for transition rules). The last test fails for any rule that
 * was never seen both ways, naming it.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JSONSchemaProps } from '../../lib/schema';
import { render } from '../../synth/synth';
import { loadCases } from '../cases';
import type { ApiCases, CreateCase, UpdateCase } from '../cases/types';
import { loadCatalog, parseYaml, ROOT } from '../support/catalog';
import { admin } from '../support/cluster';
import type { Kube } from '../support/kube';
import { claimValidator } from '../support/openapi';
import { crdsForXrd, isEstablished, type Crd, type Xrd } from '../support/xcrd';

// ---------------------------------------------------------------------------------------------------------------------
// Inputs: the synthesized XRDs, their example claims, and the cases.

const apis = await loadCatalog();
const files = render({ apis, outdir: 'unused', target: 'v1' });
const xrds = new Map<string, Xrd>();
const examples = new Map<string, Record<string, unknown>[]>();
for (const [path, text] of files) {
  const xrdPath = /^packages\/dataservices\/apis\/([^/]+)\/definition\.yaml$/.exec(path);
  if (xrdPath) xrds.set(xrdPath[1]!, parseYaml(text)[0] as unknown as Xrd);
  const example = /^packages\/dataservices\/examples\/(.+)-(a9s|a8s)\.yaml$/.exec(path);
  if (example) examples.set(example[1]!, [...(examples.get(example[1]!) ?? []), ...parseYaml(text)]);
}

const allCases: ApiCases[] = await loadCases(apis);

// ---------------------------------------------------------------------------------------------------------------------
// The cluster: `a` of the shared control planes (test/support/cluster.ts).

interface Rejection {
  readonly code: number;
  readonly message: string;
}

type Outcome = { ok: true; value: Record<string, unknown> } | { ok: false; rejection: Rejection };

/** Sends a request; returns the object, or the API server's refusal (4xx other than 404/409). Anything else throws. */
async function attempt(kube: Kube, method: string, path: string, body?: unknown, contentType?: string): Promise<Outcome> {
  const r = await kube.request(method, path, body, contentType);
  if (r.code >= 200 && r.code < 300) return { ok: true, value: r.body };
  const message = typeof r.body.message === 'string' ? r.body.message : JSON.stringify(r.body);
  if (r.code >= 400 && r.code < 500 && r.code !== 404 && r.code !== 409) return { ok: false, rejection: { code: r.code, message } };
  throw Object.assign(new Error(`${method} ${path}: API server answered ${r.code}: ${message}`), { code: r.code });
}

// ---------------------------------------------------------------------------------------------------------------------
// CEL rule tracking.

interface TrackedRule {
  /** `<xrd name> <schema path>: <rule>` */
  readonly id: string;
  readonly xrd: string;
  /** Schema path from the root: property names, `[]` for array items, `{}` for map values. */
  readonly path: readonly string[];
  readonly rule: string;
  /** What the API server reports when the rule fails; undefined when it cannot be known (messageExpression, Duplicate). */
  readonly message: string | undefined;
  readonly fieldPath?: string;
  readonly transition: boolean;
  readonly optionalOldSelf: boolean;
  accepted: string[];
  rejected: string[];
}

/** Every CEL rule under `spec` of an XRD's schemas (status cannot be written by a claim create or spec patch). */
function rulesOf(xrdName: string, xrd: Xrd): { rules: TrackedRule[]; skipped: string[] } {
  const rules: TrackedRule[] = [];
  const skipped: string[] = [];
  const walk = (s: JSONSchemaProps | undefined, path: string[]): void => {
    if (!s) return;
    for (const r of s['x-kubernetes-validations'] ?? []) {
      const where = path.join('.') || '<root>';
      if (path[0] !== 'spec') {
        skipped.push(`${xrdName} ${where}: ${r.rule}`);
        continue;
      }
      rules.push({
        id: `${xrdName} ${where}: ${r.rule}`,
        xrd: xrdName,
        path: [...path],
        rule: r.rule,
        // ruleMessageOrDefault; a messageExpression's result and a Duplicate error's text are not known beforehand.
        message: r.messageExpression || r.reason === 'FieldValueDuplicate' ? undefined : r.message || `failed rule: ${r.rule}`,
        ...(r.fieldPath ? { fieldPath: r.fieldPath } : {}),
        transition: /\boldSelf\b/.test(r.rule),
        optionalOldSelf: r.optionalOldSelf === true,
        accepted: [],
        rejected: [],
      });
    }
    for (const [k, p] of Object.entries(s.properties ?? {})) walk(p, [...path, k]);
    if (typeof s.additionalProperties === 'object') walk(s.additionalProperties, [...path, '{}']);
    if (s.items) walk(s.items, [...path, '[]']);
  };
  for (const v of xrd.spec.versions) walk(v.schema?.openAPIV3Schema as JSONSchemaProps | undefined, []);
  return { rules, skipped };
}

/** The values at a schema path in an object (several through arrays and maps). */
function nodesAt(obj: unknown, path: readonly string[]): unknown[] {
  let current: unknown[] = [obj];
  for (const seg of path) {
    const next: unknown[] = [];
    for (const v of current) {
      if (seg === '[]' && Array.isArray(v)) next.push(...v);
      else if (seg === '{}' && isRecord(v)) next.push(...Object.values(v));
      else if (isRecord(v) && v[seg] !== undefined && v[seg] !== null) next.push(v[seg]);
    }
    current = next;
  }
  return current;
}

/** Old and new values of the nodes a transition rule compares: correlated through object properties and maps only. */
function correlated(oldObj: unknown, newObj: unknown, path: readonly string[]): [unknown, unknown][] {
  let pairs: [unknown, unknown][] = [[oldObj, newObj]];
  for (const seg of path) {
    const next: [unknown, unknown][] = [];
    for (const [o, n] of pairs) {
      if (seg === '[]') continue; // atomic lists are not correlated; transition rules below them never run
      if (!isRecord(o) || !isRecord(n)) continue;
      const keys = seg === '{}' ? Object.keys(n).filter((k) => k in o) : [seg];
      for (const k of keys) if (o[k] !== undefined && o[k] !== null && n[k] !== undefined && n[k] !== null) next.push([o[k], n[k]]);
    }
    pairs = next;
  }
  return pairs;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Whether an API server error names the rule: its field path, then (in the same error) its message. */
function names(rule: TrackedRule, error: string): boolean {
  const segs = rule.path.map((seg) =>
    seg === '[]' ? '\\[\\d+\\]' : seg === '{}' ? '(?:\\[[^\\]]+\\]|\\.[^.:\\s]+)' : `\\.${escapeRe(seg)}`,
  );
  let path = segs.join('').replace(/^\\\./, '');
  if (rule.fieldPath) path += escapeRe(rule.fieldPath.replace(/^\./, '.'));
  const message = rule.message === undefined ? '' : `(?:[^,\\]]*?: )?${escapeRe(rule.message)}(?=$|, |\\]|\\n)`;
  const re = new RegExp(`(?:^|[\\s\\[,:])${path}: ${message}`);
  return re.test(error);
}

const tracked = new Map<string, TrackedRule[]>();
const skippedRules: string[] = [];
for (const [name, xrd] of xrds) {
  const { rules, skipped } = rulesOf(name, xrd);
  tracked.set(name, rules);
  skippedRules.push(...skipped);
}

function creditCreate(api: string, caseName: string, stored: unknown): void {
  for (const r of tracked.get(api) ?? []) {
    if (!r.transition && nodesAt(stored, r.path).length > 0) r.accepted.push(caseName);
  }
}

function creditUpdate(api: string, caseName: string, before: unknown, after: unknown): void {
  for (const r of tracked.get(api) ?? []) {
    if (r.transition) {
      if (correlated(before, after, r.path).length > 0 || (r.optionalOldSelf && nodesAt(after, r.path).length > 0))
        r.accepted.push(caseName);
    } else {
      // Unchanged nodes are ratcheted (not re-validated) on update: only changed nodes count.
      const changed = JSON.stringify(nodesAt(before, r.path)) !== JSON.stringify(nodesAt(after, r.path));
      if (changed && nodesAt(after, r.path).length > 0) r.accepted.push(caseName);
    }
  }
}

function creditRejection(api: string, caseName: string, error: string, update: boolean): string[] {
  const hit: string[] = [];
  for (const r of tracked.get(api) ?? []) {
    if (r.transition && !update) continue;
    if (names(r, error)) {
      r.rejected.push(caseName);
      hit.push(r.id);
    }
  }
  return hit;
}

// ---------------------------------------------------------------------------------------------------------------------
// The suite.

let kube: Kube;
const namespace = `claims-${process.pid}-${Date.now().toString(36)}`;
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

async function installAll(crds: Crd[]): Promise<void> {
  for (const crd of crds) {
    const r = await kube.request('POST', CRDS, crd);
    if (r.code >= 300) throw new Error(`the API server refuses CRD ${crd.metadata.name}: ${JSON.stringify(r.body.message ?? r.body)}`);
  }
  const deadline = Date.now() + 60_000;
  for (const crd of crds) {
    for (;;) {
      const c = await kube.request('GET', `${CRDS}/${crd.metadata.name}`);
      const status = c.body.status as { conditions?: { type: string; status: string; message?: string }[] } | undefined;
      if (isEstablished(status)) break;
      const refused = status?.conditions?.find((x) => x.type === 'NamesAccepted' && x.status === 'False');
      if (refused) throw new Error(`CRD ${crd.metadata.name}: names not accepted: ${refused.message}`);
      if (Date.now() > deadline)
        throw new Error(`CRD ${crd.metadata.name} not Established after 60s: ${JSON.stringify(status?.conditions)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

interface ClaimTarget {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
}

function claimTarget(xrd: Xrd): ClaimTarget {
  const version = xrd.spec.versions.find((v) => v.referenceable) ?? xrd.spec.versions[0]!;
  return { group: xrd.spec.group, version: version.name, plural: xrd.spec.claimNames!.plural, kind: xrd.spec.claimNames!.kind };
}

function claimSpec(api: string, c: { spec: Record<string, unknown>; backend?: string }): Record<string, unknown> {
  return { ...structuredClone(c.spec), ...(c.backend ? { compositionRef: { name: `${c.backend}-${api}` } } : {}) };
}

let claimCounter = 0;
function claimName(): string {
  claimCounter += 1;
  return `claim-${claimCounter}`;
}

const claimsPath = (t: ClaimTarget) => `/apis/${t.group}/${t.version}/namespaces/${namespace}/${t.plural}`;

/** Creates a claim with strict field validation; a server-side dry run unless `store`. */
function createClaim(t: ClaimTarget, spec: Record<string, unknown>, store: boolean): Promise<Outcome> {
  const body = { apiVersion: `${t.group}/${t.version}`, kind: t.kind, metadata: { name: claimName(), namespace }, spec };
  return attempt(kube, 'POST', `${claimsPath(t)}?fieldValidation=Strict${store ? '' : '&dryRun=All'}`, body);
}

/** A JSON merge patch of the stored claim's spec, as a server-side dry run with strict field validation. */
function patchClaim(t: ClaimTarget, name: string, patch: Record<string, unknown>): Promise<Outcome> {
  return attempt(
    kube,
    'PATCH',
    `${claimsPath(t)}/${name}?fieldValidation=Strict&dryRun=All`,
    { spec: patch },
    'application/merge-patch+json',
  );
}

function expectRejectionText(c: CreateCase | UpdateCase, message: string): void {
  if (c.error !== undefined) expect(message, `${c.name}: the error names "${c.error}"`).toContain(c.error);
}

beforeAll(async () => {
  kube = await admin('a');
  await installAll([...xrds.values()].flatMap((x) => crdsForXrd(x)));
  const ns = await kube.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  if (ns.code >= 300) throw new Error(`cannot create namespace ${namespace}: ${JSON.stringify(ns.body.message)}`);
});

afterAll(async () => {
  if (kube) await kube.request('DELETE', `/api/v1/namespaces/${namespace}`);
});

describe('inputs', () => {
  it('has an XRD with a claim for every API, and cases for every API', () => {
    expect(xrds.size).toBeGreaterThan(0);
    for (const [name, xrd] of xrds) expect(xrd.spec.claimNames, `${name} has claimNames`).toBeDefined();
    const withCases = new Set(allCases.map((c) => c.api));
    expect(
      [...xrds.keys()].filter((n) => !withCases.has(n)),
      'APIs without cases',
    ).toEqual([]);
    const files = readdirSync(join(ROOT, 'test', 'cases')).filter((f) => f.endsWith('.cases.ts'));
    expect(
      files.filter((f) => !xrds.has(f.replace(/\.cases\.ts$/, ''))),
      'cases files for APIs the catalog does not have',
    ).toEqual([]);
  });
});

for (const cases of allCases) {
  const xrd = xrds.get(cases.api);
  describe.skipIf(!xrd)(`${cases.api} claims on the API server`, () => {
    const t = xrd ? claimTarget(xrd) : (undefined as unknown as ClaimTarget);
    const validate = xrd ? claimValidator(xrd) : () => ({ valid: true, errors: [] });

    for (const example of examples.get(cases.api) ?? []) {
      it(`accepts the synthesized example ${String((example.metadata as { name: string }).name)}`, async () => {
        const r = await createClaim(t, example.spec as Record<string, unknown>, false);
        expect(r.ok ? '' : r.rejection.message).toBe('');
        if (r.ok) creditCreate(cases.api, `example ${String((example.metadata as { name: string }).name)}`, r.value);
      });
    }

    for (const c of cases.create) {
      it(`create ${c.valid ? 'accepts' : 'rejects'}: ${c.name}`, async () => {
        const spec = claimSpec(cases.api, c);
        const r = await createClaim(t, spec, false);
        const label = `create ${c.name}`;
        let celRejected = false;
        if (c.valid) {
          expect(r.ok ? '' : r.rejection.message, `${c.name} (${c.reason})`).toBe('');
          if (r.ok) creditCreate(cases.api, label, r.value);
        } else {
          expect(r.ok, `${c.name} must be rejected (${c.reason})`).toBe(false);
          if (!r.ok) {
            expectRejectionText(c, r.rejection.message);
            celRejected = creditRejection(cases.api, label, r.rejection.message, false).length > 0;
          }
        }
        // The offline validator (test/support/openapi.ts, used by the synth suite) agrees with the API server on
        // everything but CEL: what the server accepts it accepts; what the server refuses without a CEL rule it refuses.
        const offline = validate({ apiVersion: `${t.group}/${t.version}`, kind: t.kind, metadata: { name: 'offline', namespace }, spec });
        if (r.ok) expect(offline.errors, `${c.name}: offline validator vs API server`).toEqual([]);
        else if (!celRejected)
          expect(offline.valid, `${c.name}: offline validator accepts what the API server refuses: ${r.rejection.message}`).toBe(false);
      });
    }

    for (const c of cases.update) {
      it(`update ${c.valid ? 'accepts' : 'rejects'}: ${c.name}`, async () => {
        const base = await createClaim(t, claimSpec(cases.api, c), true);
        expect(base.ok ? '' : base.rejection.message, `${c.name}: the claim to update is accepted`).toBe('');
        if (!base.ok) return;
        const name = (base.value.metadata as { name: string }).name;
        const r = await patchClaim(t, name, c.patch);
        const label = `update ${c.name}`;
        if (c.valid) {
          expect(r.ok ? '' : r.rejection.message, `${c.name} (${c.reason})`).toBe('');
          if (r.ok) creditUpdate(cases.api, label, base.value, r.value);
        } else {
          expect(r.ok, `${c.name} must be rejected (${c.reason})`).toBe(false);
          if (!r.ok) {
            expectRejectionText(c, r.rejection.message);
            creditRejection(cases.api, label, r.rejection.message, true);
          }
        }
      });
    }
  });
}

describe('CEL rule coverage', () => {
  it('exercises every CEL rule of every XRD in both directions (accepted while applicable, and rejected)', () => {
    const all = [...tracked.values()].flat();
    expect(all.length, 'the XRDs have CEL rules').toBeGreaterThan(0);
    const report = all.map(
      (r) =>
        `accepted ${String(r.accepted.length).padStart(3)}  rejected ${String(r.rejected.length).padStart(3)}  ${r.id.length > 160 ? `${r.id.slice(0, 157)}...` : r.id}`,
    );
    console.log(
      `CEL rules (${all.length}):\n${report.join('\n')}${skippedRules.length ? `\nnot tracked (outside spec):\n${skippedRules.join('\n')}` : ''}`,
    );
    const neverAccepted = all.filter((r) => r.accepted.length === 0).map((r) => r.id);
    const neverRejected = all.filter((r) => r.rejected.length === 0).map((r) => r.id);
    expect({ neverAccepted, neverRejected }).toEqual({ neverAccepted: [], neverRejected: [] });
  });
});
