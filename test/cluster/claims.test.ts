/**
 * Claim validation on a real API server (issue 4).
 *
 * Every synthesized XRD is turned into its composite and claim CRDs with Crossplane's own conversion (ported in
 * harness/xcrd.ts), installed on a real kube-apiserver, and then every claim case of test/cases/<api>.cases.ts
 * is sent to it: create cases as server-side dry runs with strict field validation, update cases as a JSON merge
 * patch on a stored claim. The API server evaluates the schema and the CEL rules for real.
 *
 * Alongside, every CEL rule of every XRD is tracked in both directions: a rule is "rejected" when an invalid case's
 * error names it (its field path and message), and "accepted" when an accepted claim evaluated it (a create or changed
 * node for plain rules, an update that keeps the node for transition rules). The last test fails for any rule that
 * was never seen both ways, naming it.
 *
 * Klutch parity (issue 8): Klutch's own XRDs (schemas/klutch-crossplane-api/, under a group of their own so both sets
 * live on one API server) get every case too, and must give the same verdict as ours — except where
 * test/parity/deltas.ts lists a `verdict` delta, which is checked both ways. Klutch's CEL rules are tracked like ours:
 * each must be seen accepting and rejecting. A claim without compositionRef goes to Klutch with its default
 * composition named, because Klutch's rules read `self.compositionRef.name` unguarded and refuse every claim that
 * leaves it out (the wart ours fixes; a test below proves both sides of it).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JSONSchemaProps } from '../../lib/schema';
import { render } from '../../synth/synth';
import { loadCases } from '../cases';
import type { ApiCases, CreateCase, UpdateCase } from '../cases/types';
import { loadCatalog, parseYaml, ROOT } from '../../harness/crossplane/catalog';
import { admin } from '../support/cluster';
import { applyAt, type Kube } from '../../harness/cluster/kube';
import { claimValidator } from '../support/openapi';
import { crdsForXrd, isEstablished, modernCompositeCrd, type Crd, type XrdObject } from '../../lib/xcrd';
import { DELTAS, V2_BRANCH_VERDICTS, type VerdictDelta } from '../parity/deltas';
import { klutchXrds } from '../parity/klutch';
import { sleep } from '../../lib/abort';

// ---------------------------------------------------------------------------------------------------------------------
// Inputs: the synthesized XRDs, their example claims, and the cases.

const apis = await loadCatalog();
const files = render({ apis, outdir: 'unused', target: 'v1' });
const xrds = new Map<string, XrdObject>();
const examples = new Map<string, Record<string, unknown>[]>();
for (const [path, text] of files) {
  const xrdPath = /^packages\/dataservices\/apis\/([^/]+)\/definition\.yaml$/.exec(path);
  if (xrdPath) xrds.set(xrdPath[1]!, parseYaml(text)[0] as unknown as XrdObject);
  const example = /^packages\/dataservices\/examples\/(.+)-(a9s|a8s)\.yaml$/.exec(path);
  if (example) examples.set(example[1]!, [...(examples.get(example[1]!) ?? []), ...parseYaml(text)]);
}

/** An XRD under a group of its own, so that XRDs of one API from several sources can be installed side by side. */
const regroup = (xrd: XrdObject, group: string): XrdObject => {
  const copy = structuredClone(xrd);
  copy.spec.group = group;
  copy.metadata.name = `${copy.spec.names.plural}.${group}`;
  return copy;
};
/** Klutch's XRDs, beside ours. */
const klutch = new Map([...klutchXrds()].map(([api, { xrd }]) => [api, regroup(xrd, 'klutch-v1-5-0.parity.test')]));
/**
 * Issue 36 item 3: the `--crossplane v2` package's XRDs and Klutch's own from its Crossplane v2 branch, each under a
 * group of its own (ours would collide with the v1 claim CRDs above). Both are namespaced composites, which
 * Crossplane gives `spec.crossplane` (lib/xcrd.ts modernCompositeCrd).
 */
const oursV2 = new Map<string, XrdObject>();
for (const [path, text] of render({ apis, outdir: 'unused', target: 'v2' })) {
  const xrdPath = /^packages\/dataservices\/apis\/([^/]+)\/definition\.yaml$/.exec(path);
  if (xrdPath) oursV2.set(xrdPath[1]!, regroup(parseYaml(text)[0] as unknown as XrdObject, 'klutch-kit-v2.parity.test'));
}
const klutchV2 = new Map([...klutchXrds('v2')].map(([api, { xrd }]) => [api, regroup(xrd, 'klutch-v2.parity.test')]));
const verdictDeltas = DELTAS.filter((d): d is VerdictDelta => d.kind === 'verdict');
/** Verdict deltas seen to hold (Klutch's verdict as listed, ours the other), by `<api> <case>`. */
const verdictDeltasSeen = new Set<string>();
/** The wildcard case name of a verdict delta for every claim that leaves compositionRef out. */
const NO_COMPOSITION_REF = '<any claim without compositionRef>';

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
function rulesOf(xrdName: string, xrd: XrdObject): { rules: TrackedRule[]; skipped: string[] } {
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
for (const [name, xrd] of klutch) {
  const { rules, skipped } = rulesOf(`klutch/${name}`, xrd);
  tracked.set(`klutch/${name}`, rules);
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
  // Server-side apply: a suite that ran before in this worker may have installed a claim API's CRD already (the
  // backend suites install the same CRDs from the same XRDs); this suite's version is what counts.
  for (const crd of crds) await applyAt(kube, `${CRDS}/${crd.metadata.name}`, crd, 'klutch-kit-claims');
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
      await sleep(100);
    }
  }
}

interface ClaimTarget {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
}

function claimTarget(xrd: XrdObject): ClaimTarget {
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

/** How many requests a suite has in flight at once. */
const CONCURRENCY = 8;

/** Runs `f` on every item, at most `n` at a time. */
async function pool<T>(items: readonly T[], n: number, f: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await f(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
}

function expectRejectionText(c: CreateCase | UpdateCase, message: string): void {
  if (c.error !== undefined) expect(message, `${c.name}: the error names "${c.error}"`).toContain(c.error);
}

/** The claim spec as sent to Klutch's XRD: a claim without compositionRef names Klutch's default composition. */
function klutchSpec(api: string, c: { spec: Record<string, unknown>; backend?: string }): Record<string, unknown> {
  const def = (klutch.get(api)?.spec as { defaultCompositionRef?: { name: string } } | undefined)?.defaultCompositionRef?.name;
  return { ...structuredClone(c.spec), compositionRef: { name: c.backend ? `${c.backend}-${api}` : (def as string) } };
}

/** Klutch has the a9s and a8s backends; a case on another (cnpg) has no Klutch verdict to compare. */
const onKlutchBackend = (c: { backend?: string }) => !c.backend || c.backend === 'a9s' || c.backend === 'a8s';

/** Klutch's verdict must be ours, or the one a verdict delta states (which is then recorded as seen). */
function expectKlutchVerdict(api: string, label: string, ours: boolean, k: Outcome): void {
  const delta = verdictDeltas.find((d) => d.api === api && d.case === label);
  const want = delta ? delta.klutch === 'accepts' : ours;
  const got = k.ok;
  expect(
    got ? 'accepts' : `rejects: ${k.ok ? '' : k.rejection.message}`,
    `Klutch's XRD on ${label}${delta ? ` (delta: ${delta.why})` : ': the same verdict as ours, or a verdict delta in test/parity/deltas.ts'}`,
  ).toMatch(want ? /^accepts$/ : /^rejects/);
  if (delta && got === want && want !== ours) verdictDeltasSeen.add(`${api} ${label}`);
}

beforeAll(async () => {
  kube = await admin('a');
  await installAll([
    ...[...xrds.values(), ...klutch.values()].flatMap((x) => crdsForXrd(x)),
    ...[...oursV2.values(), ...klutchV2.values()].map((x) => modernCompositeCrd(x)),
  ]);
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
    const kx = klutch.get(cases.api);
    const kt = kx ? claimTarget(kx) : (undefined as unknown as ClaimTarget);
    const validate = xrd ? claimValidator(xrd) : () => ({ valid: true, errors: [] });

    // The requests go out a few at a time before the tests, which then judge the answers (dry runs and claims of
    // their own names: they do not interfere).
    const created = new Map<CreateCase, { ours: Outcome; klutch: Outcome }>();
    const updated = new Map<UpdateCase, { base: Outcome; ours?: Outcome; kbase: Outcome; klutch?: Outcome }>();
    beforeAll(async () => {
      if (!xrd || !kx) return;
      await pool(cases.create, CONCURRENCY, async (c) => {
        const [ours, k] = await Promise.all([
          createClaim(t, claimSpec(cases.api, c), false),
          createClaim(kt, klutchSpec(cases.api, c), false),
        ]);
        created.set(c, { ours, klutch: k });
      });
      await pool(cases.update, CONCURRENCY, async (c) => {
        const [base, kbase] = await Promise.all([
          createClaim(t, claimSpec(cases.api, c), true),
          createClaim(kt, klutchSpec(cases.api, c), true),
        ]);
        const name = (o: Outcome) => ((o.ok ? o.value.metadata : {}) as { name: string }).name;
        const [ours, k] = await Promise.all([
          base.ok ? patchClaim(t, name(base), c.patch) : undefined,
          kbase.ok ? patchClaim(kt, name(kbase), c.patch) : undefined,
        ]);
        updated.set(c, { base, ours, kbase, klutch: k });
      });
    });

    for (const example of examples.get(cases.api) ?? []) {
      it(`accepts the synthesized example ${String((example.metadata as { name: string }).name)}`, async () => {
        const r = await createClaim(t, example.spec as Record<string, unknown>, false);
        expect(r.ok ? '' : r.rejection.message).toBe('');
        if (r.ok) creditCreate(cases.api, `example ${String((example.metadata as { name: string }).name)}`, r.value);
        const k = await createClaim(kt, example.spec as Record<string, unknown>, false);
        expect(k.ok ? '' : k.rejection.message, "Klutch's XRD accepts our example").toBe('');
        if (k.ok) creditCreate(`klutch/${cases.api}`, `example ${String((example.metadata as { name: string }).name)}`, k.value);
      });
    }

    for (const c of cases.create) {
      it(`create ${c.valid ? 'accepts' : 'rejects'}: ${c.name}`, () => {
        const spec = claimSpec(cases.api, c);
        const { ours: r, klutch: k } = created.get(c)!;
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
        // Klutch's XRD judges the same claim, if it names one of Klutch's compositions (cnpg is ours alone).
        if (!onKlutchBackend(c)) return;
        if (k.ok) creditCreate(`klutch/${cases.api}`, label, k.value);
        else creditRejection(`klutch/${cases.api}`, label, k.rejection.message, false);
        expectKlutchVerdict(cases.api, label, c.valid, k);
      });
    }

    for (const c of cases.update) {
      it(`update ${c.valid ? 'accepts' : 'rejects'}: ${c.name}`, () => {
        const { base, ours, kbase, klutch: k } = updated.get(c)!;
        expect(base.ok ? '' : base.rejection.message, `${c.name}: the claim to update is accepted`).toBe('');
        if (!base.ok || !ours) return;
        const r = ours;
        const label = `update ${c.name}`;
        if (onKlutchBackend(c))
          expect(kbase.ok ? '' : kbase.rejection.message, `${c.name}: Klutch's XRD accepts the claim to update`).toBe('');
        if (kbase.ok && k && onKlutchBackend(c)) {
          if (k.ok) creditUpdate(`klutch/${cases.api}`, label, kbase.value, k.value);
          else creditRejection(`klutch/${cases.api}`, label, k.rejection.message, true);
          expectKlutchVerdict(cases.api, label, c.valid, k);
        }
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

describe('Klutch parity', () => {
  const wart = new Set(verdictDeltas.filter((d) => d.case === NO_COMPOSITION_REF).map((d) => d.api));

  it.each([...klutch.keys()].sort())(
    '%s: a claim without compositionRef is judged as the wart delta says (Klutch refuses it where its rules read compositionRef)',
    async (api) => {
      const cases = allCases.find((c) => c.api === api);
      const t = claimTarget(xrds.get(api)!);
      const kt = claimTarget(klutch.get(api)!);
      const withoutRef = (cases?.create ?? []).filter((c) => c.valid && !c.backend);
      expect(withoutRef.length, `test/cases/${api}.cases.ts has a valid claim without compositionRef`).toBeGreaterThan(0);
      for (const c of withoutRef) {
        const ours = await createClaim(t, claimSpec(api, c), false);
        expect(ours.ok ? '' : ours.rejection.message, `ours accepts ${c.name} without compositionRef`).toBe('');
        const k = await createClaim(kt, claimSpec(api, c), false);
        if (wart.has(api)) {
          expect(k.ok, `Klutch refuses ${c.name} without compositionRef`).toBe(false);
          if (!k.ok) expect(k.rejection.message).toMatch(/no such key: compositionRef/);
        } else expect(k.ok ? '' : k.rejection.message, `Klutch accepts ${c.name} without compositionRef`).toBe('');
      }
      if (wart.has(api)) verdictDeltasSeen.add(`${api} ${NO_COMPOSITION_REF}`);
    },
  );

  it('sees every verdict delta of test/parity/deltas.ts hold (a delta that no longer differs fails)', () => {
    const stale = verdictDeltas.map((d) => `${d.api} ${d.case}`).filter((k) => !verdictDeltasSeen.has(k));
    expect(stale).toEqual([]);
  });
});

describe('claims written for Klutch on Crossplane v2 (issue 36 item 3): the v2 package judges both shapes alike', () => {
  /** A namespaced composite's API. */
  const compositeTarget = (xrd: XrdObject): ClaimTarget => claimTarget({ ...xrd, spec: { ...xrd.spec, claimNames: xrd.spec.names } });
  /** The case as Klutch's v2 branch writes it: the backend in Crossplane's own field. */
  const v2Spec = (api: string, c: { spec: Record<string, unknown>; backend?: string }): Record<string, unknown> => ({
    ...structuredClone(c.spec),
    ...(c.backend ? { crossplane: { compositionRef: { name: `${c.backend}-${api}` } } } : {}),
  });
  const verdict = (o: Outcome) => (o.ok ? 'accepts' : `rejects: ${o.rejection.message}`);
  const branchDeltasSeen = new Set<string>();

  it.each(allCases.map((c) => [c.api, c] as const))(
    '%s: every create case, in either shape, as the v1 package judges it; Klutch v2 judges the v2 shape alike',
    async (api, cases) => {
      const ours = compositeTarget(oursV2.get(api)!);
      const kx = klutchV2.get(api);
      const differ: string[] = [];
      await pool(cases.create, CONCURRENCY, async (c) => {
        const want = c.valid ? /^accepts$/ : /^rejects/;
        const [klutch1x, v2shape, k] = await Promise.all([
          createClaim(ours, claimSpec(api, c), false),
          createClaim(ours, v2Spec(api, c), false),
          kx && onKlutchBackend(c) ? createClaim(compositeTarget(kx), v2Spec(api, c), false) : undefined,
        ]);
        expect(verdict(klutch1x), `${c.name}, spec.compositionRef (${c.reason})`).toMatch(want);
        expect(verdict(v2shape), `${c.name}, spec.crossplane.compositionRef (${c.reason})`).toMatch(want);
        if (!v2shape.ok && c.error !== undefined) expect(v2shape.rejection.message).toContain(c.error);
        // Klutch's v2 branch: the same verdict, or the one a delta of the branch (else of v1.5.0) states for the case.
        if (!k) return;
        const is = (d: VerdictDelta) => d.api === api && d.case === `create ${c.name}`;
        const branch = V2_BRANCH_VERDICTS.find(is);
        const delta = branch ?? verdictDeltas.find(is);
        if (k.ok !== (delta ? delta.klutch === 'accepts' : c.valid)) differ.push(`${c.name}: Klutch v2 ${verdict(k)}`);
        else if (branch) branchDeltasSeen.add(`${api} ${branch.case}`);
      });
      expect(differ).toEqual([]);
    },
  );

  it("sees every delta of Klutch's v2 branch (V2_BRANCH_VERDICTS) hold", () => {
    expect(V2_BRANCH_VERDICTS.map((d) => `${d.api} ${d.case}`).filter((k) => !branchDeltasSeen.has(k))).toEqual([]);
  });

  it('judges the backend Crossplane composes on: spec.crossplane.compositionRef where it names one, else spec.compositionRef', async () => {
    const t = compositeTarget(oursV2.get('postgresql')!);
    const spec = { service: 'a9s-postgresql13', plan: 'postgresql-single-nano-bionic' };
    const a9s = { name: 'a9s-postgresql' };
    const a8s = { name: 'a8s-postgresql' };
    const cases: [string, Record<string, unknown>, RegExp][] = [
      // An a9s-only plan: accepted where a9s composes it.
      ['v2 shape, a9s', { ...spec, crossplane: { compositionRef: a9s } }, /^accepts$/],
      ['1.x shape, a9s', { ...spec, compositionRef: a9s }, /^accepts$/],
      ['both, the same', { ...spec, compositionRef: a9s, crossplane: { compositionRef: a9s } }, /^accepts$/],
      // Crossplane writes the selection Composition's name there on a 1.x claim: it names no backend.
      [
        '1.x shape, the selection written by Crossplane',
        { ...spec, compositionRef: a9s, crossplane: { compositionRef: { name: 'postgresql' } } },
        /^accepts$/,
      ],
      ['neither: the default, a8s', spec, /^rejects: .*The a8s-postgresql composition offers the plans/],
      ['v2 shape, a8s', { ...spec, crossplane: { compositionRef: a8s } }, /^rejects: .*The a8s-postgresql composition offers the plans/],
      [
        'two backends named',
        { ...spec, compositionRef: a8s, crossplane: { compositionRef: a9s } },
        /spec\.compositionRef\.name and spec\.crossplane\.compositionRef\.name name different backends/,
      ],
    ];
    const got = await Promise.all(cases.map(async ([, s]) => verdict(await createClaim(t, s, false))));
    cases.forEach(([what, , want], i) => expect(got[i], what).toMatch(want));
  });
});

/**
 * Klutch's rules that no claim can break (ours leave such rules out): only these may go unrejected, and each must
 * exist and never be seen rejecting.
 */
const KLUTCH_RULES_THAT_CANNOT_FAIL: Record<string, string> = Object.fromEntries(
  [
    ...['keyvalue', 'logme2', 'prometheus', 'search'].map((api) => [
      `klutch/${api} spec.service: self == oldSelf`,
      'the service enum has one value, so it can never change',
    ]),
    ["klutch/keyvalue spec.plan: oldSelf.contains('ssl') == self.contains('ssl')", 'every KeyValue plan is an ssl plan'],
  ].map(([id, why]) => [id, why] as const),
);

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
    const neverRejected = all.filter((r) => r.rejected.length === 0 && !KLUTCH_RULES_THAT_CANNOT_FAIL[r.id]).map((r) => r.id);
    const canFail = Object.keys(KLUTCH_RULES_THAT_CANNOT_FAIL).filter((id) => !all.some((r) => r.id === id && r.rejected.length === 0));
    expect(canFail, 'rules listed as unable to fail that are gone or were seen failing').toEqual([]);
    expect({ neverAccepted, neverRejected }).toEqual({ neverAccepted: [], neverRejected: [] });
  });
});
