/**
 * A real node for a harness cluster (issue 18, test/support/node/): the kubelet on containerd and runc, CNI bridge,
 * kube-proxy, CoreDNS and kube-scheduler inside a network namespace of the run. Pods run a locally built image,
 * reach each other through a Service's ClusterIP and DNS name, and reach the API server through the `kubernetes`
 * Service with their ServiceAccount token; a stopped node leaves no process, namespace, mount or cgroup.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/catalog';
import { type ControlPlanes, startControlPlanes } from '../support/control-plane';
import { applyAt, eventually, execIn, getObject, type Kube, kubeFor, requireOk, type WireObject } from '../support/kube';
import { isAlive, tail } from '../support/processes';
import { type Node, processesInNetns, startNode } from '../support/node/node';
import { kubeBinaryPath } from '../tools/kube';

const CLUSTER = 'node';
const NS = 'node-test';
let cp: ControlPlanes;
let node: Node;
let kube: Kube;
/** Fixed paths where containerd, the kubelet, the CNI library and buildah write by default: the node keeps off them. */
const MACHINE_PATHS = [
  '/run/containerd',
  '/run/netns',
  '/var/lib/kubelet',
  '/var/lib/cni',
  '/var/lib/containerd',
  '/var/log/pods',
  '/var/log/containers',
  '/etc/cni',
  '/var/lib/containers',
  '/opt/containerd',
];
let machinePathsBefore: string[];

beforeAll(async () => {
  cp = await startControlPlanes({ clusters: [CLUSTER], binary: kubeBinaryPath(), pods: true });
  kube = kubeFor(cp.clusters[CLUSTER]!);
  machinePathsBefore = MACHINE_PATHS.filter((p) => existsSync(p));
  node = await startNode(cp.clusters[CLUSTER]!);
  await requireOk(kube, 'POST', '/api/v1/namespaces', { metadata: { name: NS } });
  // Pods need the namespace's ServiceAccount (ServiceAccount admission), which the controller-manager makes.
  await eventually('the default ServiceAccount of the test namespace', () =>
    getObject(kube, `/api/v1/namespaces/${NS}/serviceaccounts/default`),
  );
}, 45 * 60_000);

afterAll(async () => {
  await node?.stop();
  await cp?.stop();
}, 120_000);

/**
 * What a container printed, from the kubelet's log file of the Pod. CRI format: `<time> <stream> <tag> <text>`, a
 * long line split into parts tagged P and a last one tagged F.
 */
function podOutput(pod: string): string {
  const dir = node.podLogs(NS, pod);
  if (!existsSync(dir)) return '';
  let out = '';
  for (const c of readdirSync(dir)) {
    const file = join(dir, c, '0.log');
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const m = /^\S+ \S+ ([PF]) (.*)$/.exec(line);
      if (m) out += m[2] + (m[1] === 'F' ? '\n' : '');
    }
  }
  return out;
}

/** Creates a Pod of busybox running `script` (as `sh -c`) and waits for `phase`; the error names the Pod and its logs. */
async function runPod(name: string, script: string, phase: 'Running' | 'Succeeded', extra: WireObject = {}): Promise<WireObject> {
  await applyAt(kube, `/api/v1/namespaces/${NS}/pods/${name}`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, labels: { app: name } },
    spec: {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'main', image: node.busyboxImage, imagePullPolicy: 'Never', command: ['/bin/sh', '-c', script], ...extra }],
    },
  });
  let last: WireObject | undefined;
  try {
    return await eventually(
      `Pod ${NS}/${name} to be ${phase}`,
      async () => {
        last = await getObject(kube, `/api/v1/namespaces/${NS}/pods/${name}`);
        if (last?.status?.phase === 'Failed') throw new Error('the Pod failed');
        const ready =
          phase !== 'Running' || (last?.status?.conditions ?? []).some((c: WireObject) => c.type === 'Ready' && c.status === 'True');
        return last?.status?.phase === phase && ready ? last : undefined;
      },
      90_000,
    );
  } catch (e) {
    const kubelet = node.procs.find((p) => p.role === 'kubelet')!;
    throw new Error(
      `${(e as Error).message}\nPod status: ${JSON.stringify(last?.status)}\nits logs (${node.podLogs(NS, name)}):\n${podOutput(name)}\n` +
        `kubelet log ${kubelet.logPath}:\n${tail(kubelet.logPath, 15)}`,
    );
  }
}

describe('a node for the harness', () => {
  it('registers a Ready node whose address exists only inside its own network namespace', async () => {
    const n = await getObject(kube, `/api/v1/nodes/${node.name}`);
    expect(n?.status?.conditions?.find((c: WireObject) => c.type === 'Ready')?.status).toBe('True');
    expect(n?.status?.addresses).toContainEqual({ type: 'InternalIP', address: node.ip });
    expect(n?.status?.nodeInfo?.containerRuntimeVersion).toMatch(/^containerd:\/\/1\.6\./);
    expect(n?.status?.nodeInfo?.kubeletVersion).toBe('v1.34.1');
    const hostAddresses = Object.values(networkInterfaces())
      .flat()
      .map((a) => a?.address);
    expect(hostAddresses).not.toContain(node.ip);
    expect(processesInNetns(node.netns).length).toBeGreaterThan(0);
  });

  it('runs a Pod of a locally built image, its readiness probe answered through the Pod network', async () => {
    const pod = await runPod('web', 'echo "hello from $HOSTNAME" > /www/index.html && exec httpd -f -v -p 8080 -h /www', 'Running', {
      readinessProbe: { httpGet: { path: '/index.html', port: 8080 }, periodSeconds: 1 },
    });
    expect(pod.status.podIP).toMatch(/^10\.244\.0\./);
    expect(pod.spec.nodeName).toBe(node.name);
  }, 120_000);

  it('lets a second Pod reach the first through its Service ClusterIP and its DNS name', async () => {
    const svc = await applyAt(kube, `/api/v1/namespaces/${NS}/services/web`, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: NS },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
    });
    const ip = svc.spec.clusterIP as string;
    expect(ip).toMatch(/^10\.0\.0\./);
    // The endpointslice controller and kube-proxy need a moment for a new Service: the client retries.
    await runPod(
      'client',
      // busybox 1.35's `wget -T` crashes (SIGSEGV); its `timeout` bounds each try instead.
      `for i in $(seq 1 30); do timeout 3 wget -q -O- http://${ip}/index.html && break; sleep 1; done; ` +
        `for i in $(seq 1 30); do timeout 3 wget -q -O- http://web.${NS}.svc.cluster.local/index.html && break; sleep 1; done`,
      'Succeeded',
    );
    const out = podOutput('client');
    expect(out.match(/hello from web/g)).toHaveLength(2);
  }, 120_000);

  it('lets the API server reach the kubelet and the Pods through its egress into the node: Pod logs, Pod and Service proxies, exec', async () => {
    const logs = await kube.request('GET', `/api/v1/namespaces/${NS}/pods/web/log`);
    expect(logs.code, JSON.stringify(logs.body)).toBe(200);
    expect(String(logs.body.message)).toContain('response:200');
    for (const path of ['pods/web:8080/proxy/index.html', 'services/web:80/proxy/index.html']) {
      const r = await kube.request('GET', `/api/v1/namespaces/${NS}/${path}`);
      expect(r.code, `${path}: ${JSON.stringify(r.body)}`).toBe(200);
      expect(String(r.body.message)).toBe('hello from web\n');
    }
    // exec: the API server upgrades the kubelet connection (a websocket to the client) through the same egress.
    expect(await execIn(kube, NS, 'web', 'main', ['cat', '/www/index.html'])).toBe('hello from web\n');
  });

  it('lets a Pod reach the API server through the kubernetes Service with its ServiceAccount token', async () => {
    await applyAt(kube, `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles/read-pods`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'read-pods', namespace: NS },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
    });
    await applyAt(kube, `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings/read-pods`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'read-pods', namespace: NS },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read-pods' },
      subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: NS }],
    });
    // What in-cluster config reads: the Service's address from the environment, token, CA and namespace from the
    // mounted ServiceAccount volume. (busybox's wget does not check certificates; the CA is compared below.)
    const sa = '/var/run/secrets/kubernetes.io/serviceaccount';
    const url = `https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT/api/v1/namespaces/$(cat ${sa}/namespace)/pods/incluster`;
    // Section marks computed by the shell (`@@$((1))` prints `@@1`): the Pod's own JSON, printed first, holds the
    // command's text, never its output.
    await runPod(
      'incluster',
      `wget -q -O- --header "Authorization: Bearer $(cat ${sa}/token)" ${url}; echo; ` +
        `echo "@@$((1))"; wget -q -O- ${url} 2>&1; echo "@@$((2))"; cat ${sa}/ca.crt`,
      'Succeeded',
    );
    const [withToken, withoutToken, ca] = podOutput('incluster').split(/^@@\d\n/m);
    const self = JSON.parse(withToken!.slice(withToken!.indexOf('{'))) as WireObject;
    expect(self.kind).toBe('Pod');
    expect(self.metadata.name).toBe('incluster');
    expect(self.metadata.namespace).toBe(NS);
    expect(withoutToken).toContain('403 Forbidden');
    expect(ca!.trim()).toBe(cp.clusters[CLUSTER]!.ca.trim());
    const pod = await getObject(kube, `/api/v1/namespaces/${NS}/pods/incluster`);
    expect(pod?.spec?.serviceAccountName).toBe('default');
  }, 120_000);

  it('leaves no process, network namespace, mount or cgroup behind when stopped', async () => {
    const { netns, procs, runDir, cgroupDirs } = node;
    await node.stop();
    expect(procs.filter((p) => isAlive(p.pid)).map((p) => `${p.role} ${p.pid}`)).toEqual([]);
    expect(processesInNetns(netns)).toEqual([]);
    const mounts = readFileSync('/proc/mounts', 'utf8')
      .split('\n')
      .filter((l) => l.includes(runDir) || /kubelet|containerd|klutch-kit-node/.test(l));
    expect(mounts).toEqual([]);
    expect(cgroupDirs.filter((d) => existsSync(d))).toEqual([]);
    expect(existsSync(join(runDir, 'containerd', 'root'))).toBe(false);
    expect(MACHINE_PATHS.filter((p) => existsSync(p))).toEqual(machinePathsBefore);
  }, 120_000);

  it('leaves nothing behind when the test runner is killed: its reaper sweeps the node, Pods included', async () => {
    const runner = spawn(
      process.execPath,
      [join(ROOT, 'scripts', 'run-ts.mjs'), join(ROOT, 'test', 'cluster', 'fixtures', 'hold-node.ts'), kubeBinaryPath()],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      runner.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      runner.once('exit', (code) => reject(new Error(`the runner exited (${code}) before its node ran a Pod`)));
    });
    const held = JSON.parse(line) as { egressSocket: string; runDir: string; netns: string; cgroupDirs: string[]; pids: number[] };
    // Processes in the cgroup tree: the node's own, containerd's shims and the Pod's (pause and sleep).
    const inTree = () => held.cgroupDirs.flatMap((d) => (existsSync(d) ? cgroupProcs(d) : []));
    expect(inTree().length).toBeGreaterThan(held.pids.length);
    runner.kill('SIGKILL');
    await eventually('the reaper to finish', async () => (existsSync(join(held.runDir, 'finished')) ? true : undefined), 60_000);
    expect(readFileSync(join(held.runDir, 'finished'), 'utf8')).toContain('reaper');
    expect(inTree()).toEqual([]);
    expect(held.cgroupDirs.filter((d) => existsSync(d))).toEqual([]);
    expect(processesInNetns(held.netns)).toEqual([]);
    expect(
      readFileSync('/proc/mounts', 'utf8')
        .split('\n')
        .filter((l) => l.includes(held.runDir)),
    ).toEqual([]);
    expect(existsSync(join(held.runDir, 'containerd', 'root'))).toBe(false);
    expect(existsSync(held.egressSocket)).toBe(false);
  }, 240_000);
});

/** Every process id in a cgroup folder and below. */
function cgroupProcs(dir: string): number[] {
  const here = readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  const below = readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => {
      try {
        return cgroupProcs(join(dir, e.name));
      } catch {
        return [];
      }
    });
  return [...here, ...below];
}
