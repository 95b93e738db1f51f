/**
 * The test control planes themselves (issue 4): what later suites (bind backend, konnector) rely on, checked on the
 * shared clusters `a` and `b` started by the `cluster` project's global setup.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type PeerCertificate } from 'node:tls';
import { PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { kubeBinaryPath } from '../../harness/tools/kube';
import { ROOT } from '../../harness/crossplane/catalog';
import { admin, cluster, controlPlanes, testNamespace } from '../support/cluster';
import { startControlPlanes } from '../../harness/cluster/control-plane';
import { eventually, kubeFor } from '../../harness/cluster/kube';
import { isAlive as alive } from '../../harness/cluster/processes';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** The certificate an API server presents, verified against `ca` (the connection fails if `ca` did not issue it). */
function servingCertificate(server: string, ca: string): Promise<PeerCertificate> {
  const { hostname, port } = new URL(server);
  return new Promise((resolve, reject) => {
    const s = connect({ host: hostname, port: Number(port), ca }, () => {
      resolve(s.getPeerCertificate());
      s.end();
    });
    s.on('error', reject);
  });
}

/** A small CRD with a status subresource and a CEL rule, named uniquely so reruns on a kept cluster never clash. */
function widgetCrd(group: string) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: { size: { type: 'integer', minimum: 1 }, color: { type: 'string' } },
                  'x-kubernetes-validations': [{ rule: 'self.size <= 10', message: 'size is at most 10' }],
                },
                status: { type: 'object', properties: { phase: { type: 'string' } } },
              },
            },
          },
        },
      ],
    },
  };
}

async function establish(kube: Awaited<ReturnType<typeof admin>>, crd: ReturnType<typeof widgetCrd>): Promise<void> {
  const created = await kube.request('POST', CRDS, crd);
  expect(created.code, JSON.stringify(created.body.message)).toBe(201);
  await eventually(`CRD ${crd.metadata.name} to be Established`, async () => {
    const r = await kube.request('GET', `${CRDS}/${crd.metadata.name}`);
    const conditions = (r.body.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
    return conditions.some((c) => c.type === 'Established' && c.status === 'True') || undefined;
  });
}

describe('control planes', () => {
  it('serve Kubernetes v1.34.1 on every cluster and refuse unknown tokens', async () => {
    const clusters = [await cluster('a'), await cluster('b')];
    expect((await controlPlanes()).clusters, 'b is listed once it was asked for').toMatchObject({ a: clusters[0], b: clusters[1] });
    expect(clusters[0]!.server).not.toBe(clusters[1]!.server);
    for (const c of clusters) {
      const v = await kubeFor(c).request('GET', '/version');
      expect(v.body.gitVersion, `cluster ${c.name} /version`).toBe('v1.34.1');
      const anonymous = await kubeFor(c, 'admin', 'not-a-token').request('GET', '/api/v1/namespaces');
      expect(anonymous.code, 'an unknown token is refused').toBe(401);
    }
  });

  it('serve an ECDSA certificate of their own CA, for loopback and the kubernetes Service, which Pods trust through kube-root-ca.crt', async () => {
    const [a, b] = [await cluster('a'), await cluster('b')];
    for (const [c, other] of [
      [a, b],
      [b, a],
    ] as const) {
      const cert = await servingCertificate(c.server, c.ca);
      expect(cert.asn1Curve, `${c.name}: P-256, not kube-apiserver's self-made RSA-2048 (a signature per handshake)`).toBe('prime256v1');
      expect(cert.subjectaltname).toContain('IP Address:127.0.0.1');
      expect(cert.subjectaltname, 'the Service IP and name Pods reach it by').toContain('IP Address:10.0.0.1');
      expect(cert.subjectaltname).toContain('DNS:kubernetes.default.svc');
      await expect(servingCertificate(c.server, other.ca), `${other.name}'s CA does not vouch for ${c.name}`).rejects.toThrow(
        /unable to verify|self.signed|certificate/i,
      );
      const root = await kubeFor(c).request('GET', '/api/v1/namespaces/default/configmaps/kube-root-ca.crt');
      expect((root.body.data as Record<string, string> | undefined)?.['ca.crt'], `${c.name}: kube-root-ca.crt`).toBe(c.ca);
    }
  });

  it('establishes a CRD and round-trips a custom resource with server-side apply', async () => {
    const kube = await admin();
    const group = `ssa${Date.now().toString(36)}.test.klutch-kit.io`;
    await establish(kube, widgetCrd(group));
    const ns = await testNamespace(kube);
    const widget = { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w', namespace: ns }, spec: { size: 3, color: 'blue' } };
    const applied: KubernetesObject = await kube.objects.patch(
      widget,
      undefined,
      undefined,
      'klutch-kit-test',
      true,
      PatchStrategy.ServerSideApply,
    );
    expect(applied.metadata?.uid).toBeTruthy();
    const read = (await kube.objects.read(widget)) as KubernetesObject & { spec: unknown };
    expect(read.spec).toEqual({ size: 3, color: 'blue' });
    expect(read.metadata?.managedFields?.map((f) => `${f.manager}/${f.operation}`)).toContain('klutch-kit-test/Apply');

    // Applying without `color` removes the field this manager owned; the CEL rule guards the new size.
    const reapplied = (await kube.objects.patch(
      { ...widget, spec: { size: 5 } },
      undefined,
      undefined,
      'klutch-kit-test',
      true,
      PatchStrategy.ServerSideApply,
    )) as typeof widget;
    expect(reapplied.spec).toEqual({ size: 5 });
    const refused = await kube.request(
      'PATCH',
      `/apis/${group}/v1/namespaces/${ns}/widgets/w?fieldManager=klutch-kit-test&force=true`,
      { ...widget, spec: { size: 11 } },
      PatchStrategy.ServerSideApply,
    );
    expect(refused.code).toBe(422);
    expect(String(refused.body.message)).toContain('size is at most 10');
  });

  it('forbids a restricted identity what RBAC does not grant, and allows what it does', async () => {
    const c = await cluster();
    const kube = kubeFor(c);
    const developer = kubeFor(c, 'developer');
    const ns = await testNamespace(kube);
    const other = await testNamespace(kube);
    const list = (namespace: string) => developer.request('GET', `/api/v1/namespaces/${namespace}/configmaps`);
    expect((await list(ns)).code, 'nothing granted yet').toBe(403);
    expect(String((await list(ns)).body.message)).toContain('User "developer" cannot list resource "configmaps"');

    await kube.rbac.createNamespacedRole({
      namespace: ns,
      body: { metadata: { name: 'read-configmaps' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }] },
    });
    await kube.rbac.createNamespacedRoleBinding({
      namespace: ns,
      body: {
        metadata: { name: 'developers-read' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read-configmaps' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'klutch-kit:developers' }],
      },
    });
    await eventually('the RoleBinding to take effect', async () => ((await list(ns)).code === 200 ? true : undefined));
    expect((await list(other)).code, 'the grant is for one namespace only').toBe(403);
    const create = await developer.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'x' } });
    expect(create.code, 'create was not granted').toBe(403);
    expect((await kubeFor(c, 'operator').request('GET', `/api/v1/namespaces/${ns}/configmaps`)).code, 'another group gets nothing').toBe(
      403,
    );
  });

  it('completes namespace deletion and garbage-collects owner-referenced objects (controllers run)', async () => {
    const kube = await admin();
    const ns = await testNamespace(kube);
    const owner = await kube.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'owner' } } });
    await kube.core.createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: {
          name: 'dependent',
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid! }],
        },
      },
    });
    await kube.core.deleteNamespacedConfigMap({ namespace: ns, name: 'owner' });
    await eventually('the dependent ConfigMap to be garbage-collected', async () =>
      (await kube.request('GET', `/api/v1/namespaces/${ns}/configmaps/dependent`)).code === 404 ? true : undefined,
    );

    const doomed = await testNamespace(kube, 'doomed');
    await eventually(
      `the default ServiceAccount in ${doomed}`,
      async () => (await kube.core.readNamespacedServiceAccount({ namespace: doomed, name: 'default' })).metadata?.uid,
    );
    await kube.core.createNamespacedConfigMap({ namespace: doomed, body: { metadata: { name: 'content' } } });
    await kube.core.deleteNamespace({ name: doomed });
    await eventually(`namespace ${doomed} to be gone`, async () =>
      (await kube.request('GET', `/api/v1/namespaces/${doomed}`)).code === 404 ? true : undefined,
    );
  });

  it('issues ServiceAccount tokens (TokenRequest) that its own API server accepts and the other cluster does not', async () => {
    const a = await cluster('a');
    const b = await cluster('b');
    const kube = kubeFor(a);
    const ns = await testNamespace(kube);
    await kube.core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'robot' } } });
    const tr = await kube.core.createNamespacedServiceAccountToken({
      namespace: ns,
      name: 'robot',
      body: { spec: { audiences: [], expirationSeconds: 600 } },
    });
    const token = tr.status?.token;
    expect(token).toBeTruthy();
    const review = await kubeFor(a, 'robot', token).authn.createSelfSubjectReview({ body: {} });
    expect(review.status?.userInfo?.username).toBe(`system:serviceaccount:${ns}:robot`);
    expect((await kubeFor(b, 'robot', token).request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {})).code).toBe(401);
  });

  it('keeps two clusters apart: objects, CRDs and credentials of one are unknown to the other', async () => {
    const a = await cluster('a');
    const b = await cluster('b');
    const ka = kubeFor(a);
    const kb = kubeFor(b);
    const ns = await testNamespace(ka, 'only-a');
    expect((await kb.request('GET', `/api/v1/namespaces/${ns}`)).code).toBe(404);
    const group = `iso${Date.now().toString(36)}.test.klutch-kit.io`;
    await establish(ka, widgetCrd(group));
    expect((await kb.request('GET', `${CRDS}/widgets.${group}`)).code).toBe(404);
    expect((await kubeFor(b, 'admin', a.tokens.admin).request('GET', '/api/v1/namespaces')).code, "a's admin token on b").toBe(401);
  });
});

// Each test has control planes of its own; running them at once overlaps their start-up.
describe.concurrent('teardown', () => {
  it('adds a cluster to a running etcd; restarts one API server on the same address (objects and credentials survive, the other cluster never notices); stop() ends every process', async ({
    expect,
  }) => {
    await controlPlanes();
    const cp = await startControlPlanes({ clusters: ['p'], binary: kubeBinaryPath(), identities: [{ name: 'dev' }], log: () => undefined });
    expect(Object.keys(cp.clusters)).toEqual(['p']);
    try {
      // What the slots' cluster b is started with when a file first asks for it (test/support/cluster.ts).
      const [added, again] = await Promise.all([cp.addCluster('q'), cp.addCluster('q')]);
      expect(again, 'asked twice at once, started once').toBe(added);
      expect(Object.keys(cp.clusters).sort()).toEqual(['p', 'q']);
      expect(Object.keys(added.tokens).sort(), 'the same identities').toEqual(['admin', 'dev']);
      expect(cp.pids.length, 'etcd, and an API server and a controller manager per cluster').toBe(5);
      expect(cp.pids.every(alive)).toBe(true);
      await expect(cp.addCluster('Q'), 'a name that is no DNS label').rejects.toThrow('is not a DNS label');
      const p = kubeFor(cp.clusters.p!);
      const q = kubeFor(cp.clusters.q!);
      await p.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'kept' }, data: { k: 'v' } } });
      const before = cp.pids.length;

      await cp.stopApiServer('p', { crash: true });
      await expect(p.request('GET', '/api/v1/namespaces/default/configmaps/kept')).rejects.toThrow(/ECONNREFUSED/);
      expect((await q.request('GET', '/api/v1/namespaces')).code, 'q serves while p is down').toBe(200);
      await expect(cp.startApiServer('q'), 'a running API server is not started twice').rejects.toThrow('the API server of q is running');

      await cp.startApiServer('p');
      const kept = await p.core.readNamespacedConfigMap({ namespace: 'default', name: 'kept' });
      expect(kept.data, 'the same client, token and CA work after the restart').toEqual({ k: 'v' });
      await cp.restartApiServer('p');
      expect((await p.request('GET', '/api/v1/namespaces/default/configmaps/kept')).code).toBe(200);
      expect(cp.pids.length, 'each start is a new process, tracked for teardown').toBe(before + 2);
    } finally {
      await cp.stop();
    }
    expect(cp.pids.filter(alive)).toEqual([]);
    expect(existsSync(join(cp.runDir, 'p', 'kube-apiserver.log')), 'logs are kept').toBe(true);
    expect(existsSync(join(cp.runDir, 'etcd-data')), 'state is not').toBe(false);
  }, 180_000); // three API server starts on a machine busy with the other suites

  it('leaves no process behind when the test runner is killed', async ({ expect }) => {
    await controlPlanes();
    const runner = spawn(
      process.execPath,
      [join(ROOT, 'scripts', 'run-ts.mjs'), join(ROOT, 'test', 'cluster', 'fixtures', 'hold-control-plane.ts'), kubeBinaryPath()],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      runner.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      runner.once('exit', (code) => reject(new Error(`the runner exited (${code}) before its control plane was ready`)));
    });
    const { pids } = JSON.parse(line) as { pids: number[] };
    expect(pids.every(alive)).toBe(true);
    runner.kill('SIGKILL');
    await eventually(
      'every control-plane process to exit after its runner was killed',
      async () => (pids.some(alive) ? undefined : true),
      30_000,
    );
  });
});
