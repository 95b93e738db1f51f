/** What `npm run synth` writes: the layout a user reads, the v2 target, and byte-for-byte stable output. */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseYaml, ROOT, runSynth, synthCatalog } from '../../harness/crossplane/catalog';
import { VERSION } from '../../lib/version';

const tmp = mkdtempSync(join(tmpdir(), 'klutch-kit-synth-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => statSync(join(dir, f)).isFile())
    .map((f) => relative(dir, join(dir, f)))
    .sort();
}

const kinds = (files: string[], dir: string, kind: string) =>
  files
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => parseYaml(readFileSync(join(dir, f), 'utf8')))
    .filter((o) => o.kind === kind);

/**
 * `npm run synth` with no options, run once for the tests that only read its output (a run is about 1.6 CPU-s: ten
 * runs were two thirds of this file's CPU).
 */
let plain: { out: string; r: ReturnType<typeof runSynth> } | undefined;
function plainSynth(): { out: string; r: ReturnType<typeof runSynth> } {
  const out = join(tmp, 'plain');
  return (plain ??= { out, r: runSynth(['--out', out]) });
}

describe('npm run synth', () => {
  it('writes the Configuration package, the examples and the export templates', () => {
    const { out, r } = plainSynth();
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/synthesized 11 APIs into \d+ files/);
    const pkg = join(out, 'packages', 'dataservices');
    const files = listFiles(pkg);
    expect(files).toContain('crossplane.yaml');
    expect(kinds(files, pkg, 'CompositeResourceDefinition')).toHaveLength(11);
    const compositions = kinds(files, pkg, 'Composition')
      .map((c) => (c.metadata as { name: string }).name)
      .sort();
    expect(compositions).toEqual([
      'a8s-backup',
      'a8s-postgresql',
      'a8s-restore',
      'a8s-servicebinding',
      'a9s-backup',
      'a9s-keyvalue',
      'a9s-logme2',
      'a9s-mariadb',
      'a9s-messaging',
      'a9s-mongodb',
      'a9s-postgresql',
      'a9s-prometheus',
      'a9s-restore',
      'a9s-search',
      'a9s-servicebinding',
      'cnpg-backup',
      'cnpg-postgresql',
      'cnpg-restore',
      'cnpg-servicebinding',
    ]);
    expect(files.filter((f) => f.startsWith('examples/'))).toHaveLength(19);
    const templates = listFiles(join(out, 'control-plane', 'export-templates'));
    expect(templates).toContain('keyvalueinstances.yaml');
    expect(templates).toHaveLength(11);
    // The plugin runs as kubectl runs plugins: an executable kubectl-bind on PATH, started by its #! line.
    const plugin = join(out, 'kubectl-bind', 'kubectl-bind.mjs');
    expect(readFileSync(plugin, 'utf8').slice(0, 20)).toBe('#!/usr/bin/env node\n');
    expect(statSync(plugin).mode & 0o111).toBe(0o111);
    const help = spawnSync(plugin, ['list', '--help'], { encoding: 'utf8' });
    expect(help.stdout).toMatch(/^kubectl bind list: /);
  });

  it('writes the same bytes for the same input', () => {
    const [a, b] = [plainSynth().out, join(tmp, 'same-2')];
    expect(plainSynth().r.status).toBe(0);
    expect(runSynth(['--out', b, '--quiet']).status).toBe(0);
    const files = listFiles(a);
    expect(files.length).toBeGreaterThan(40);
    expect(listFiles(b)).toEqual(files);
    // Buffer.equals: a deep toEqual walks a bundle of megabytes byte by byte (minutes for the backend's 8 MB).
    for (const f of files) expect(readFileSync(join(b, f)).equals(readFileSync(join(a, f))), f).toBe(true);
  });

  it('replaces its own output folders and leaves others alone', () => {
    // A folder holding synth's output: a copy of the plain run's (the same bytes a run writes, shown above), not a run.
    const out = join(tmp, 'replace');
    expect(plainSynth().r.status).toBe(0);
    cpSync(plainSynth().out, out, { recursive: true });
    const stale = join(out, 'packages', 'dataservices', 'apis', 'gone', 'definition.yaml');
    mkdirSync(dirname(stale), { recursive: true });
    writeFileSync(stale, 'kind: Old\n');
    writeFileSync(join(out, 'notes.txt'), 'mine\n');
    // Files synth writes, edited by hand: a run writes only what differs, and these differ.
    const edited = ['control-plane/kustomization.yaml', 'kubectl-bind/kubectl-bind.mjs', 'kubectl-bind/krew/kubectl-bind.tar.gz'];
    for (const f of edited) writeFileSync(join(out, f), 'edited by hand\n');
    expect(runSynth(['--out', out, '--quiet']).status).toBe(0);
    expect(existsSync(stale)).toBe(false);
    expect(readFileSync(join(out, 'notes.txt'), 'utf8')).toBe('mine\n');
    for (const f of edited) expect(readFileSync(join(out, f)).equals(readFileSync(join(plainSynth().out, f))), f).toBe(true);
    expect(listFiles(out).filter((f) => f !== 'notes.txt')).toEqual(listFiles(plainSynth().out));
  });

  it('rejects an unknown target with a message that names the option', () => {
    const r = runSynth(['--out', join(tmp, 'bad'), '--crossplane', 'v3']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--crossplane must be v1 or v2');
  });
});

describe('provider dependencies', () => {
  it('takes the providers the Configuration depends on from the command line', () => {
    const out = join(tmp, 'providers');
    const r = runSynth([
      '--out',
      out,
      '--quiet',
      '--provider-anynines',
      'registry.example.com/a9s/provider-anynines@>=v1.7.0',
      '--provider-kubernetes',
      'registry.example.com/pk@v0.19.0',
    ]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const meta = parseYaml(readFileSync(join(out, 'packages', 'dataservices', 'crossplane.yaml'), 'utf8'))[0] as {
      spec: { dependsOn: { provider?: string; version: string }[] };
    };
    const providers = meta.spec.dependsOn.filter((d) => d.provider);
    expect(providers).toEqual([
      { provider: 'registry.example.com/a9s/provider-anynines', version: '>=v1.7.0' },
      { provider: 'registry.example.com/pk', version: 'v0.19.0' },
    ]);
  });

  it('bounds every dependency below its next major by default, and names the license', () => {
    const out = join(tmp, 'bounded');
    const r = runSynth(['--out', out, '--quiet', '--function-package', 'registry.example.com/fn/function-dataservices:v1.4.2']);
    expect(r.stderr).toBe('');
    const meta = parseYaml(readFileSync(join(out, 'packages', 'dataservices', 'crossplane.yaml'), 'utf8'))[0] as {
      metadata: { annotations: Record<string, string> };
      spec: { dependsOn: { provider?: string; function?: string; version: string }[] };
    };
    // A new major may drop a kind the Compositions compose: Crossplane must not pick it on a fresh control plane.
    expect(meta.spec.dependsOn.map((d) => d.version)).toEqual(['>=v1.5.0, <v2.0.0', '>=v0.18.0, <v2.0.0', '>=v1.4.2, <v2.0.0']);
    expect(meta.metadata.annotations['meta.crossplane.io/license']).toBe('Apache-2.0');
    expect(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).license).toBe(
      meta.metadata.annotations['meta.crossplane.io/license'],
    );
  });

  it('gives both packages the same maintainer, source and license, and a description that names every backend', () => {
    const out = join(tmp, 'package-metadata');
    expect(runSynth(['--out', out, '--quiet']).stderr).toBe('');
    const fn = parseYaml(readFileSync(join(out, 'packages', 'function-dataservices', 'crossplane.yaml'), 'utf8'))[0] as {
      metadata: { annotations: Record<string, string> };
    };
    const config = parseYaml(readFileSync(join(out, 'packages', 'dataservices', 'crossplane.yaml'), 'utf8'))[0] as typeof fn;
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { license: string };
    for (const m of [config, fn]) {
      const { 'meta.crossplane.io/description': description, ...rest } = m.metadata.annotations;
      expect(rest).toEqual({
        'meta.crossplane.io/maintainer': 'klutch-kit',
        'meta.crossplane.io/source': 'github.com/klutch-kit/klutch-kit',
        'meta.crossplane.io/license': pkg.license,
      });
      for (const backend of ['a9s', 'a8s', 'CloudNativePG']) expect(description).toContain(backend);
    }
  });

  it('puts --setting values into every a9s instance and the cnpg image, and refuses a setting no recipe reads', () => {
    const out = join(tmp, 'settings');
    const org = '8c1f4c0e-1111-4b1e-9d5a-000000000abc';
    const r = runSynth(['--out', out, '--quiet', '--setting', `a9s.organizationGuid=${org}`, '--setting', 'a9s.spaceGuid=space-1']);
    expect(r.stderr).toBe('');
    const apis = join(out, 'packages', 'dataservices', 'apis');
    const instances = readdirSync(apis).filter((a) => existsSync(join(apis, a, 'composition-a9s.yaml')));
    let checked = 0;
    for (const a of instances) {
      const text = readFileSync(join(apis, a, 'composition-a9s.yaml'), 'utf8');
      if (!text.includes('kind: ServiceInstance')) continue;
      checked++;
      expect(text, a).toContain(`to: spec.forProvider.organizationGuid\n            value: ${org}`);
      expect(text, a).toContain('to: spec.forProvider.spaceGuid\n            value: space-1');
    }
    expect(checked, 'the eight a9s instance services').toBe(8);
    const typo = runSynth(['--out', join(tmp, 'typo'), '--setting', 'a9s.orgGuid=x']);
    expect(typo.status).toBe(1);
    expect(typo.stderr).toBe(
      'synth: setting "a9s.orgGuid" is read by no recipe of the catalog; the catalog reads a9s.organizationGuid, a9s.spaceGuid, cnpg.image.a9s-postgresql15\n',
    );
    // The PostgreSQL image of a version, pinned by digest: the cnpg instance's map says it, the other versions keep theirs.
    const image = `registry.example.com/platform/postgresql@sha256:${'ab'.repeat(32)}`;
    const pinned = runSynth(['--out', join(tmp, 'pinned'), '--quiet', '--setting', `cnpg.image.a9s-postgresql15=${image}`]);
    expect(pinned.stderr).toBe('');
    const cnpg = readFileSync(join(tmp, 'pinned', 'packages', 'dataservices', 'apis', 'postgresql', 'composition-cnpg.yaml'), 'utf8');
    expect(cnpg).toContain(`a9s-postgresql15: ${image}`);
    expect(cnpg).not.toContain('settings:');
    const spaced = runSynth(['--out', join(tmp, 'typo'), '--setting', 'cnpg.image.a9s-postgresql15=a b']);
    expect(spaced.status).toBe(1);
    expect(spaced.stderr).toContain('setting "cnpg.image.a9s-postgresql15" must be one word (an image reference), not "a b"');
    const bad = runSynth(['--out', join(tmp, 'typo'), '--setting', 'spaceGuid']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--setting must be <backend>.<name>=<value>');
  });

  it("labels the PrometheusRules, ServiceMonitor and PodMonitors for the Prometheus Operator's selectors (--monitoring-label)", () => {
    const out = join(tmp, 'monitoring-labels');
    const r = runSynth([
      '--out',
      out,
      '--quiet',
      '--monitoring-label',
      'release=kube-prometheus-stack',
      '--monitoring-label',
      'team=platform',
      '--monitoring-namespace',
      'prometheus',
    ]);
    expect(r.stderr).toBe('');
    const monitors = [
      ...readdirSync(join(out, 'control-plane', 'monitoring')).map((f) => join(out, 'control-plane', 'monitoring', f)),
      ...readdirSync(join(out, 'app-cluster', 'monitoring')).map((f) => join(out, 'app-cluster', 'monitoring', f)),
    ].filter((f) => /\/(prometheusrule|servicemonitor|podmonitor)-[^/]+\.yaml$/.test(f));
    expect(
      monitors.length,
      "both rules, the backend ServiceMonitor, the function's, the konnector's and the bindings' konnectors' PodMonitors",
    ).toBe(6);
    for (const f of monitors)
      expect((parseYaml(readFileSync(f, 'utf8'))[0] as { metadata: { labels?: unknown } }).metadata.labels, f).toEqual({
        release: 'kube-prometheus-stack',
        team: 'platform',
      });
    // The scrape policies open the metrics ports to that namespace.
    const scrape = parseYaml(readFileSync(join(out, 'app-cluster', 'monitoring', 'networkpolicy-scrape-konnector.yaml'), 'utf8'))[0] as any;
    expect(scrape.spec.ingress[0].from[0].namespaceSelector.matchLabels).toEqual({ 'kubernetes.io/metadata.name': 'prometheus' });
    expect(runSynth(['--out', join(tmp, 'bad-label'), '--monitoring-namespace', 'Prometheus']).stderr).toContain(
      'synth: --monitoring-namespace "Prometheus" is not a namespace name',
    );
    const bad = runSynth(['--out', join(tmp, 'bad-label'), '--monitoring-label', 'release=not ok']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('synth: --monitoring-label release=not ok: label value "not ok" must be empty or at most 63 letters');
    expect(runSynth(['--out', join(tmp, 'bad-label'), '--monitoring-label', 'release']).stderr).toContain(
      '--monitoring-label must be <key>=<value>, e.g. release=kube-prometheus-stack; got "release"',
    );
  });

  it('rejects a provider without a version constraint, naming the option and the form', () => {
    const r = runSynth([
      '--out',
      join(tmp, 'bad-provider'),
      '--provider-kubernetes',
      'xpkg.crossplane.io/crossplane-contrib/provider-kubernetes:v0.18.0',
    ]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      '--provider-kubernetes must be <package>@<version constraint>, e.g. xpkg.crossplane.io/crossplane-contrib/provider-kubernetes@>=v0.18.0',
    );
  });
});

describe('Pod security of what synth ships', () => {
  const PSA = {
    'pod-security.kubernetes.io/enforce': 'restricted',
    'pod-security.kubernetes.io/warn': 'restricted',
    'pod-security.kubernetes.io/audit': 'restricted',
  };
  type K8s = { kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; spec?: any };

  it('labels every Namespace restricted, and fences every Deployment with a default-deny and an allow NetworkPolicy', async () => {
    const objs = [...(await synthCatalog()).values()].flat() as K8s[];
    const namespaces = objs.filter((o) => o.kind === 'Namespace');
    expect(namespaces.map((n) => n.metadata.name).sort()).toEqual(['klutch-bind', 'klutch-bind-backend', 'klutch-control-plane']);
    for (const n of namespaces) expect(n.metadata.labels, n.metadata.name).toMatchObject(PSA);
    const deployments = objs.filter((o) => o.kind === 'Deployment');
    expect(deployments).toHaveLength(2);
    for (const d of deployments) {
      const policies = objs.filter((o) => o.kind === 'NetworkPolicy' && o.metadata.namespace === d.metadata.namespace);
      const deny = policies.find((p) => JSON.stringify(p.spec.podSelector) === '{}');
      expect(deny?.spec, `${d.metadata.namespace}: default deny`).toEqual({ podSelector: {}, policyTypes: ['Egress', 'Ingress'] });
      const labels = d.spec.template.metadata.labels as Record<string, string>;
      const selects = (p: K8s) => Object.entries((p.spec.podSelector.matchLabels ?? {}) as Record<string, string>);
      const allow = policies.find((p) => selects(p).length > 0 && selects(p).every(([k, v]) => labels[k] === v));
      expect(
        [...(allow?.spec.policyTypes ?? [])].sort(),
        `${d.metadata.namespace}/${d.metadata.name}: an allow policy for its Pods`,
      ).toEqual(['Egress', 'Ingress']);
    }
  });

  it("builds the images on a maintained Node LTS, and the backend's starts by Klutch's entrypoint paths too", async () => {
    const { BASE_IMAGE, DEPLOYABLES, dockerfile } = await import('../../synth/deployables');
    expect(BASE_IMAGE).toMatch(/nodejs(2[2-9]|[3-9]\d)-/); // Node 20 reached its end of life in April 2026
    for (const d of DEPLOYABLES) expect(dockerfile(d), d.name).toContain(`FROM ${BASE_IMAGE}\n`);
    const { out, r: synth } = plainSynth();
    expect(synth.status).toBe(0);
    const backend = join(out, 'backend');
    const docker = readFileSync(join(backend, 'Dockerfile'), 'utf8');
    for (const path of ['/example-backend', '/ko-app/example-backend']) expect(docker).toContain(`COPY entrypoint ${path}\n`);
    expect(statSync(join(backend, 'entrypoint')).mode & 0o111).toBe(0o111);
    // Run it as the image would, with the bundle where this checkout has it: Klutch's arguments reach the backend.
    const script = readFileSync(join(backend, 'entrypoint'), 'utf8');
    expect(script.startsWith('#!/nodejs/bin/node\n')).toBe(true);
    const local = join(tmp, 'entrypoint.cjs');
    writeFileSync(local, script.replaceAll('/backend/backend.mjs', join(backend, 'backend.mjs')));
    const r = spawnSync(process.execPath, [local, '--help'], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('--cookie-signing-key');
    // Every server says which release it is, as the konnector and the plugin do (lib/version.ts).
    for (const bundle of [join(backend, 'backend.mjs'), join(out, 'function', 'function.mjs')]) {
      const v = spawnSync(process.execPath, [bundle, '--version'], { encoding: 'utf8' });
      expect(v.status, `${bundle}: ${v.stderr}`).toBe(0);
      expect(v.stdout, bundle).toBe(`${VERSION}\n`);
    }
  });

  it('selects every Deployment by app.kubernetes.io labels, the same whichever tool writes it', async () => {
    const objs = [...(await synthCatalog()).values()].flat() as K8s[];
    const deployments = objs.filter((o) => o.kind === 'Deployment');
    expect(deployments.map((d) => [d.metadata.name, d.spec.selector])).toEqual([
      [
        'klutch-bind-backend',
        { matchLabels: { 'app.kubernetes.io/name': 'klutch-bind-backend', 'app.kubernetes.io/part-of': 'klutch-kit' } },
      ],
      ['konnector', { matchLabels: { 'app.kubernetes.io/name': 'konnector', 'app.kubernetes.io/part-of': 'klutch-kit' } }],
    ]);
    for (const d of deployments) {
      expect(d.spec.template.metadata.labels).toMatchObject(d.spec.selector.matchLabels);
      const ns = (o: K8s) => o.metadata.namespace === d.metadata.namespace;
      const service = objs.find((o) => o.kind === 'Service' && ns(o));
      if (service) expect(service.spec.selector, `Service ${service.metadata.name}`).toEqual(d.spec.selector.matchLabels);
      const allow = objs.find((o) => o.kind === 'NetworkPolicy' && ns(o) && o.metadata.name === d.metadata.name);
      expect(allow?.spec.podSelector, `NetworkPolicy ${d.metadata.name}`).toEqual(d.spec.selector);
    }
    // No construct-path label anywhere: a renamed construct id must not change an immutable selector.
    expect(JSON.stringify(objs)).not.toContain('cdk8s.io/metadata.addr');
    // kubectl bind installs the konnector from the same construct under another construct path: the same selector.
    const { konnectorManifests } = await import('../../cli/konnector-install');
    const installed = konnectorManifests({ konnector: true, namespace: 'klutch-bind', grants: [] }).find(
      (m: any) => m.kind === 'Deployment',
    ) as any;
    expect(installed.spec.selector).toEqual(deployments.find((d) => d.metadata.name === 'konnector')!.spec.selector);
  });

  it('builds every image to run as the numeric non-root user the Pods name', async () => {
    const { DEPLOYABLES, dockerfile } = await import('../../synth/deployables');
    for (const d of DEPLOYABLES) expect(dockerfile(d), d.name).toMatch(/^USER 65532:65532$/m);
    const objs = [...(await synthCatalog()).values()].flat() as K8s[];
    const users = objs
      .filter((o) => o.kind === 'Deployment' || o.kind === 'DeploymentRuntimeConfig')
      .map((o) => (o.kind === 'Deployment' ? o.spec.template.spec : o.spec.deploymentTemplate.spec.template.spec))
      .flatMap((pod: any) => [pod.securityContext.runAsUser, ...pod.containers.map((c: any) => c.securityContext.runAsUser)]);
    expect(new Set(users)).toEqual(new Set([65532]));
  });
});

describe('the v2 target', () => {
  it('emits namespaced v2 XRDs without claims, and compositions for the namespaced kind', async () => {
    const out = await synthCatalog('v2');
    const xrd = out.get('packages/dataservices/apis/postgresql/definition.yaml')?.[0] as {
      apiVersion: string;
      spec: Record<string, unknown>;
    };
    expect(xrd.apiVersion).toBe('apiextensions.crossplane.io/v2');
    expect(xrd.spec.scope).toBe('Namespaced');
    expect(xrd.spec.claimNames).toBeUndefined();
    expect(xrd.spec.names).toEqual({ kind: 'PostgresqlInstance', plural: 'postgresqlinstances' });
    // The XRD's default Composition selects the backend by Klutch 1.x's spec.compositionRef.name; each backend's own,
    // under Klutch's name, is there for claims that name it in spec.crossplane.compositionRef (Klutch on Crossplane v2).
    expect(xrd.spec.defaultCompositionRef).toEqual({ name: 'postgresql' });
    expect([...out.keys()].filter((p) => p.startsWith('packages/dataservices/apis/postgresql/')).sort()).toEqual([
      'packages/dataservices/apis/postgresql/composition-a8s.yaml',
      'packages/dataservices/apis/postgresql/composition-a9s.yaml',
      'packages/dataservices/apis/postgresql/composition-cnpg.yaml',
      'packages/dataservices/apis/postgresql/composition.yaml',
      'packages/dataservices/apis/postgresql/definition.yaml',
    ]);
    const composition = out.get('packages/dataservices/apis/postgresql/composition.yaml')?.[0] as {
      metadata: { name: string };
      spec: { compositeTypeRef: unknown; writeConnectionSecretsToNamespace?: string; pipeline: { input: Record<string, any> }[] };
    };
    expect(composition.metadata.name).toBe('postgresql');
    expect(composition.spec.compositeTypeRef).toEqual({ apiVersion: 'anynines.com/v1', kind: 'PostgresqlInstance' });
    expect(composition.spec.writeConnectionSecretsToNamespace).toBeUndefined();
    const input = composition.spec.pipeline[0]!.input;
    expect([input.kind, input.from, input.default, Object.keys(input.inputs).sort()]).toEqual([
      'Selection',
      'spec.compositionRef.name',
      'a8s-postgresql',
      ['a8s-postgresql', 'a9s-postgresql', 'cnpg-postgresql'],
    ]);
    // A backend's own Composition carries exactly the input the selection holds for it.
    const a9s = out.get('packages/dataservices/apis/postgresql/composition-a9s.yaml')?.[0] as typeof composition;
    expect(a9s.metadata.name).toBe('a9s-postgresql');
    expect(a9s.spec.compositeTypeRef).toEqual(composition.spec.compositeTypeRef);
    expect(a9s.spec.pipeline[0]!.input).toEqual(input.inputs['a9s-postgresql']);
    // Klutch's claim field is part of the API, with the claim's schema; the CEL rules read it.
    const spec = (xrd.spec as any).versions[0].schema.openAPIV3Schema.properties.spec;
    expect(spec.properties.compositionRef).toMatchObject({ type: 'object', required: ['name'], properties: { name: { type: 'string' } } });
    expect(JSON.stringify(spec['x-kubernetes-validations'])).toContain('has(self.compositionRef) ? self.compositionRef.name');
    expect(out.get('packages/dataservices/examples/postgresql-a9s.yaml')?.[0]).toMatchObject({
      spec: { compositionRef: { name: 'a9s-postgresql' } },
    });
    // The a8s compositions compose provider-kubernetes' namespaced Object, which v1.0.0 introduced.
    const meta = out.get('packages/dataservices/crossplane.yaml')?.[0] as { spec: { dependsOn: { provider?: string; version: string }[] } };
    expect(meta.spec.dependsOn.find((d) => d.provider?.endsWith('/provider-kubernetes'))?.version).toBe('>=v1.0.0, <v2.0.0');
  });

  it('keeps the v1 target Klutch-compatible by default', async () => {
    const out = await synthCatalog();
    const xrd = out.get('packages/dataservices/apis/postgresql/definition.yaml')?.[0] as {
      apiVersion: string;
      spec: Record<string, unknown>;
    };
    expect(xrd.apiVersion).toBe('apiextensions.crossplane.io/v1');
    expect(xrd.spec.claimNames).toEqual({ kind: 'PostgresqlInstance', plural: 'postgresqlinstances' });
    expect(xrd.spec.names).toEqual({ kind: 'XPostgresqlInstance', plural: 'xpostgresqlinstances' });
    expect(xrd.spec.defaultCompositionRef).toEqual({ name: 'a8s-postgresql' });
  });
});
