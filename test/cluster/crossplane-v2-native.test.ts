/**
 * The v2-native target end to end, through the bind layer (issue 19, deliverable 3 and its acceptance): the sandbox
 * (sandbox/sandbox.ts) with the `--crossplane v2` package on Crossplane v2 core — namespaced composites, namespaced
 * provider-kubernetes `kubernetes.m.crossplane.io` Objects composed by our function, no claims — and an app cluster
 * bound to it by `kubectl bind` with the konnector. The app developer writes Klutch's claims unchanged
 * (`spec.compositionRef.name: a8s-postgresql`); they arrive on the control plane as namespaced composites, the selection
 * Composition composes them on the backend they name, and status and `<claim>-creds` come back to the app cluster.
 * Every API is bound and every example claim synth writes is made in the app cluster: the a8s ones go to Ready and
 * creds; the a9s ones are selected onto a9s, whose cluster-scoped managed resources Crossplane v2 refuses for a
 * namespaced composite (provider-anynines has no namespaced kinds yet).
 *
 * What cannot run here is played, as in the sandbox: the a8s operators (a stand-in marks PostgreSQLs Running and
 * implements ServiceBindings), and the konnector runs as a process under its Deployment's ServiceAccount.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../sandbox/sandbox';
import { Steps } from '../../sandbox/steps';
import { parseYaml } from '../support/catalog';
import { controlPlanes } from '../support/cluster';
import { eventually, getObject, kubeFromConfig, requireOk, type Kube } from '../support/kube';
import { A9sServiceBrokerStandIn } from '../support/stand-ins/a9s-service-broker';
import { ensureCrossplane } from '../tools/crossplane';
import { ensureProviderKubernetes } from '../tools/provider-kubernetes';

type Obj = Record<string, any>;

const NS = 'default';
let dir: string;
let output = '';
let sandbox: Sandbox;
let app: Kube;
let control: Kube;
let failed = false;

beforeAll(async () => {
  // On a new machine the binaries are built first (once, by whichever suite asks first).
  await controlPlanes();
  await ensureCrossplane(undefined, 'v2');
  await ensureProviderKubernetes();
  dir = mkdtempSync(join(tmpdir(), 'klutch-kit-v2-native-'));
  try {
    sandbox = await startSandbox({ dir, steps: new Steps((t) => (output += t)), crossplane: 'v2' });
  } catch (e) {
    (e as Error).message += `\nsandbox output:\n${output}`;
    throw e;
  }
  app = kubeFromConfig(readFileSync(sandbox.kubeconfigs.app, 'utf8'));
  control = kubeFromConfig(readFileSync(sandbox.kubeconfigs.controlPlane, 'utf8'));
  // Every example below is made in the app cluster, so every API is bound (the sandbox bound two); provider-anynines'
  // CRDs on the control plane make Crossplane's answer to an a9s claim the one a real platform gives.
  for (const [p, text] of sandbox.files) {
    if (!p.startsWith('control-plane/export-templates/')) continue;
    const t = parseYaml(text)[0] as Obj;
    const plural = t.spec.APIServiceSelector.resource as string;
    plurals.set(`${t.spec.APIServiceSelector.group}/${plural}`, plural);
    if (plural !== 'postgresqlinstances' && plural !== 'servicebindings') await sandbox.bind(plural);
  }
  await new A9sServiceBrokerStandIn(control).installCrds();
}, 45 * 60_000);

afterAll(async () => {
  await sandbox?.stop();
  // Logs stay for a failed run (the failure names the folder).
  if (dir && !failed) rmSync(dir, { recursive: true, force: true });
  else if (dir) writeFileSync(join(dir, 'sandbox-output.txt'), output);
});

beforeEach(({ onTestFailed }) => {
  onTestFailed(({ task }) => {
    failed = true;
    for (const e of task.result?.errors ?? []) e.message = `${e.message}\n(logs in ${dir}; sandbox output:\n${output})`;
  });
});

// ---------------------------------------------------------------------------------------------------------------------

/** `<group>/<plural>` of every API, from the export templates: every example's kind is `<plural>` lower-cased minus s. */
const plurals = new Map<string, string>();
const pluralOf = (o: Obj): string => {
  const group = String(o.apiVersion).split('/')[0];
  const p = plurals.get(`${group}/${String(o.kind).toLowerCase()}s`);
  if (!p) throw new Error(`no export template offers ${o.kind}; templates: ${[...plurals.keys()].join(', ')}`);
  return p;
};

function example(name: string): Obj {
  const text = sandbox.files.get(`packages/dataservices/examples/${name}.yaml`);
  if (!text) throw new Error(`the synth output has no example ${name}`);
  return parseYaml(text)[0] as Obj;
}

const path = (o: Obj, ns = o.metadata.namespace as string) => `/apis/${o.apiVersion}/namespaces/${ns}/${pluralOf(o)}/${o.metadata.name}`;

/** Creates an object in the app cluster as kubectl create would (a CRD the konnector just made may answer 404 a moment). */
async function createInApp(obj: Obj): Promise<void> {
  const r = await eventually(
    `${obj.kind} ${obj.metadata.name} to be created in the app cluster`,
    async () => {
      const res = await app.request('POST', `/apis/${obj.apiVersion}/namespaces/${obj.metadata.namespace}/${pluralOf(obj)}`, obj);
      return [404, 429, 503].includes(res.code) ? undefined : res;
    },
    60_000,
  );
  if (r.code >= 300) throw new Error(`cannot create ${obj.kind} ${obj.metadata.name}: ${r.code} ${JSON.stringify(r.body.message)}`);
}

/** The composite on the control plane that the app cluster's claim became (same group, kind and name). */
function upstream(obj: Obj, timeoutMs = 90_000): Promise<Obj> {
  return eventually(
    `${obj.kind} ${obj.metadata.name} on the control plane`,
    () => getObject(control, path(obj, sandbox.claims.providerNamespace)),
    timeoutMs,
  );
}

function conditionOf(obj: Obj | undefined, type: string): Obj | undefined {
  return (obj?.status?.conditions as Obj[] | undefined)?.find((c) => c.type === type);
}

// ---------------------------------------------------------------------------------------------------------------------

describe('the v2-native package on Crossplane v2 core', () => {
  it('serves the APIs as namespaced composites without claims, composed by one selection Composition each', async () => {
    expect(output).toContain('with the --crossplane v2 package');
    const crd = await requireOk(control, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/postgresqlinstances.anynines.com');
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties).toHaveProperty('compositionRef');
    expect(
      await getObject(control, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/xpostgresqlinstances.anynines.com'),
    ).toBeUndefined();
    const composition = await requireOk(control, 'GET', '/apis/apiextensions.crossplane.io/v1/compositions/postgresql');
    expect(composition.spec.pipeline[0].input.kind).toBe('Selection');
  });
});

describe("the sandbox's round trip, through the bind layer", () => {
  it('the claim from the app cluster is a namespaced composite upstream, composed into a namespaced Object and the a8s PostgreSQL beside it', async () => {
    const ns = sandbox.claims.providerNamespace;
    const xr = await requireOk(control, 'GET', `/apis/anynines.com/v1/namespaces/${ns}/postgresqlinstances/${sandbox.claims.instance}`);
    expect(xr.spec.compositionRef).toEqual({ name: 'a8s-postgresql' });
    expect(xr.spec.crossplane.compositionRef).toEqual({ name: 'postgresql' });
    const refs = xr.spec.crossplane.resourceRefs as Obj[];
    expect(refs.map((r) => [r.apiVersion, r.kind])).toEqual([['kubernetes.m.crossplane.io/v1alpha1', 'Object']]);
    const object = await requireOk(control, 'GET', `/apis/kubernetes.m.crossplane.io/v1alpha1/namespaces/${ns}/objects/${refs[0]!.name}`);
    expect(object.spec.providerConfigRef).toEqual({ kind: 'ClusterProviderConfig', name: 'kubernetes-provider' });
    const pg = await requireOk(
      control,
      'GET',
      `/apis/postgresql.anynines.com/v1beta3/namespaces/${ns}/postgresqls/${sandbox.claims.instance}`,
    );
    expect(pg.status.clusterStatus).toBe('Running');
    expect(conditionOf(xr, 'Ready')?.status).toBe('True');
  });

  it('<binding>-creds: composed in the composite namespace upstream, and the same credentials in the app cluster', async () => {
    const name = `${sandbox.claims.binding}-creds`;
    const up = await requireOk(control, 'GET', `/api/v1/namespaces/${sandbox.claims.providerNamespace}/secrets/${name}`);
    const down = await requireOk(app, 'GET', `/api/v1/namespaces/${NS}/secrets/${name}`);
    expect(Object.keys(down.data).sort()).toEqual(['database', 'instance_service', 'password', 'username']);
    expect(down.data).toEqual(up.data);
  });
});

describe('every a8s example claim, written for Klutch, applied in the app cluster', () => {
  const names = ['postgresql-a8s', 'servicebinding-a8s', 'backup-a8s', 'restore-a8s'];

  it('each arrives as a composite, is composed on a8s, and the PostgreSQL turns Ready in the app cluster', async () => {
    for (const n of names) await createInApp(example(n));
    for (const n of names) {
      const e = example(n);
      const xr = await upstream(e);
      expect(xr.spec.compositionRef.name, n).toBe(e.spec.compositionRef.name);
      const composed = await eventually(
        `${n} composed`,
        async () =>
          ((await getObject(control, path(e, sandbox.claims.providerNamespace)))?.spec?.crossplane?.resourceRefs as Obj[] | undefined)?.[0],
        90_000,
      );
      expect([composed.kind, composed.apiVersion], n).toEqual(['Object', 'kubernetes.m.crossplane.io/v1alpha1']);
    }
    const pg = example('postgresql-a8s');
    await eventually(
      'the example PostgresqlInstance Ready in the app cluster',
      async () => (conditionOf(await getObject(app, path(pg)), 'Ready')?.status === 'True' ? true : undefined),
      120_000,
    );
  }, 300_000);

  it("reads the example ServiceBinding's <claim>-creds in the app cluster", async () => {
    const sb = example('servicebinding-a8s');
    const secret = await eventually(
      `Secret ${sb.metadata.name}-creds with data in the app cluster`,
      async () => {
        const s = await getObject(app, `/api/v1/namespaces/${NS}/secrets/${sb.metadata.name}-creds`);
        return Object.keys(s?.data ?? {}).length ? s : undefined;
      },
      120_000,
    );
    expect(Object.keys(secret.data).sort()).toEqual(['database', 'instance_service', 'password', 'username']);
    expect(Buffer.from(secret.data.instance_service, 'base64').toString()).toBe(
      `example-postgresql-a8s-master.${sandbox.claims.providerNamespace}`,
    );
  }, 150_000);
});

describe('the backend a Klutch claim names is the one that composes it', () => {
  it('every a9s example is accepted in the app cluster and selected onto a9s upstream (whose cluster-scoped resources v2 refuses for a namespaced composite)', async () => {
    const a9s = [...sandbox.files.keys()]
      .map((p) => /^packages\/dataservices\/examples\/(.+-a9s)\.yaml$/.exec(p)?.[1])
      .filter((n): n is string => n !== undefined)
      .sort();
    expect(a9s.length).toBe(11);
    for (const n of a9s) await createInApp(example(n));
    const refused = new Map<string, string>();
    await eventually(
      'every a9s example to be refused by Crossplane, naming its a9s resource',
      async () => {
        for (const n of a9s) {
          if (refused.has(n)) continue;
          const c = conditionOf(await getObject(control, path(example(n), sandbox.claims.providerNamespace)), 'Synced');
          if (c?.status === 'False' && /cluster scoped/.test(c.message)) refused.set(n, c.message);
        }
        return refused.size === a9s.length ? true : undefined;
      },
      120_000,
    ).catch((e: Error) => {
      e.message += `\nrefused so far: ${[...refused.keys()].join(', ')}`;
      throw e;
    });
    // The composed resource's name is <backend>-<service>: the a9s recipe was selected.
    for (const n of a9s) expect(refused.get(n), n).toContain(`"a9s-${n.replace(/-a9s$/, '')}"`);
  }, 240_000);

  it('an unknown compositionRef is refused by the function, and the app developer reads why in the app cluster', async () => {
    const e = example('postgresql-a8s');
    e.metadata.name = 'unknown-backend';
    e.spec.compositionRef.name = 'a7s-postgresql';
    await createInApp(e);
    const message = await eventually(
      'the refusal in the app cluster',
      async () => {
        const c = conditionOf(await getObject(app, path(e)), 'Synced');
        return c?.status === 'False' && c.message?.includes('a7s-postgresql') ? (c.message as string) : undefined;
      },
      90_000,
    );
    expect(message).toContain('spec.compositionRef.name is "a7s-postgresql", not one of a8s-postgresql, a9s-postgresql');
  }, 120_000);
});

describe('deleting the example claims in the app cluster', () => {
  it('removes the composites, their namespaced Objects and the a8s objects upstream, and the creds in the app cluster', async () => {
    const ns = sandbox.claims.providerNamespace;
    const examples = ['restore-a8s', 'backup-a8s', 'servicebinding-a8s', 'postgresql-a8s'].map(example);
    const a8s = [
      `/apis/postgresql.anynines.com/v1beta3/namespaces/${ns}/postgresqls/example-postgresql-a8s`,
      `/apis/servicebindings.anynines.com/v1beta3/namespaces/${ns}/servicebindings/example-servicebinding-a8s`,
    ];
    for (const p of a8s) await requireOk(control, 'GET', p); // there before
    await requireOk(app, 'GET', `/api/v1/namespaces/${NS}/secrets/example-servicebinding-a8s-creds`);
    for (const e of examples) await requireOk(app, 'DELETE', path(e));
    await eventually(
      'the example composites to be gone upstream',
      async () => {
        for (const e of examples) if (await getObject(control, path(e, ns))) return undefined;
        return true;
      },
      120_000,
    );
    // provider-kubernetes deletes the a8s objects when their Objects go (it requeues deletions under a backoff).
    await eventually(
      'the a8s PostgreSQL and ServiceBinding of the examples to be gone',
      async () => {
        for (const p of a8s) if (await getObject(control, p)) return undefined;
        return true;
      },
      180_000,
    );
    expect(await getObject(app, `/api/v1/namespaces/${NS}/secrets/example-servicebinding-a8s-creds`)).toBeUndefined();
    // The sandbox's own claims are untouched.
    expect(await getObject(control, `/apis/anynines.com/v1/namespaces/${ns}/postgresqlinstances/${sandbox.claims.instance}`)).toBeDefined();
  }, 360_000);
});
