/**
 * Who reaches whom on a node of the harness, by real connections: busybox Pods that listen, and a busybox Pod that
 * tries each target once (`nc -w`: a connection a NetworkPolicy drops times out; an admitted one runs `/bin/true` and
 * closes). The nodes enforce NetworkPolicies (kube-network-policies, harness/node/network-policies.ts).
 */
import { randomBytes } from 'node:crypto';
import { eventually, getObject, requireOk, type Kube, type WireObject } from '../../harness/cluster/kube';
import type { AttachedNode } from '../../harness/node/attach';

export type PodNode = Pick<AttachedNode, 'busyboxImage'>;

/** Seconds a probe Pod waits before its first connection (see reaches). */
const SETTLE_S = 3;

/**
 * How long a Pod may take to start. The verdicts are the Pod's own (its `nc -w` timeouts), so this bound only catches a
 * Pod that never runs; on a busy two-core node a sandbox alone has taken 18 s, so it is generous.
 */
const START_MS = 90_000;

/** The longest one attempt may take: an HTTP target's `timeout 10`, a plain one's `nc -w 3`. */
const ATTEMPT_MS = 10_000;

export interface Target {
  readonly host: string;
  readonly port: number;
  /** An HTTP path: the target is reached when a GET of it answers 200 (a scrape), not on connect alone. */
  readonly http?: string;
}

/**
 * The probe's shell test of one target. HTTP by hand over nc: the image's static busybox wget crashes (SIGSEGV) on
 * every request here; HTTP/1.0, so the server closes the connection after its answer.
 */
function attempt(t: Target): string {
  return t.http
    ? `printf 'GET ${t.http} HTTP/1.0\r\n\r\n' | timeout 10 nc -w 3 ${t.host} ${t.port} > /tmp/answer; grep -q '^HTTP/1\.[01] 200' /tmp/answer`
    : `nc -w 3 ${t.host} ${t.port} -e /bin/true </dev/null`;
}

export interface ProbeOptions {
  /**
   * Run as the Pod Security `restricted` profile asks (a namespace of ours enforces it): non-root, no privilege
   * escalation, no capabilities, RuntimeDefault seccomp. Plain TCP targets only (HTTP answers go to /tmp). And never
   * Ready, so that a Service whose selector the probe's labels match sends it nothing. @default false
   */
  readonly restricted?: boolean;
}

function busyboxPod(
  node: PodNode,
  ns: string,
  name: string,
  labels: Readonly<Record<string, string>>,
  script: string,
  o: ProbeOptions = {},
): WireObject {
  const container: WireObject = { name: 'main', image: node.busyboxImage, imagePullPolicy: 'Never', command: ['/bin/sh', '-c', script] };
  if (o.restricted) {
    container.securityContext = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };
    container.readinessProbe = { exec: { command: ['/bin/false'] }, periodSeconds: 60 };
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, labels: { app: name, ...labels } },
    spec: {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 1,
      automountServiceAccountToken: false,
      ...(o.restricted && {
        securityContext: { runAsNonRoot: true, runAsUser: 65534, runAsGroup: 65534, seccompProfile: { type: 'RuntimeDefault' } },
      }),
      containers: [container],
    },
  };
}

/** A Pod `ns/name` with `labels` accepting connections on each of `ports`; resolves to its address once it runs. */
export async function listener(
  kube: Kube,
  node: PodNode,
  ns: string,
  name: string,
  ports: readonly number[],
  labels: Readonly<Record<string, string>> = {},
): Promise<string> {
  // `-ll`: keep listening after each connection; every accepted one runs /bin/true and is closed.
  const script = `${ports.map((p) => `nc -ll -p ${p} -e /bin/true &`).join(' ')} wait`;
  await requireOk(kube, 'POST', `/api/v1/namespaces/${ns}/pods`, busyboxPod(node, ns, name, labels, script));
  const pod = await eventually(
    `Pod ${ns}/${name} running with an address`,
    async () => {
      const p = await getObject(kube, `/api/v1/namespaces/${ns}/pods/${name}`);
      if (p?.status?.phase === 'Failed') throw new Error(`Pod ${ns}/${name} failed: ${JSON.stringify(p.status)}`);
      return p?.status?.phase === 'Running' && p.status.podIP ? p : undefined;
    },
    START_MS,
  );
  return pod.status.podIP as string;
}

/**
 * Runs a Pod `ns/<prefix>-<random>`, carrying `labels` from its start (what a policy's podSelector sees), that
 * connects to each target once; returns for each whether the connection was made. The Pod is deleted afterwards.
 */
export async function reaches(
  kube: Kube,
  node: PodNode,
  ns: string,
  prefix: string,
  targets: Readonly<Record<string, Target>>,
  labels: Readonly<Record<string, string>> = {},
  o: ProbeOptions = {},
): Promise<Record<string, boolean>> {
  if (o.restricted && Object.values(targets).some((t) => t.http))
    throw new Error('reaches: a restricted probe takes plain TCP targets only');
  // The node's agent learns a new Pod's address from the API server (containerd 1.6 has no NRI to tell it sooner), so
  // for about a second a new Pod's connections pass unjudged (upstream's kubernetes/kubernetes#85966): wait that out.
  const script = [
    `sleep ${SETTLE_S}`,
    ...Object.entries(targets).map(([key, t]) => `if ${attempt(t)}; then echo "${key} yes"; else echo "${key} no"; fi`),
  ].join('\n');
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  const path = `/api/v1/namespaces/${ns}/pods/${name}`;
  await requireOk(kube, 'POST', `/api/v1/namespaces/${ns}/pods`, busyboxPod(node, ns, name, labels, script, o));
  try {
    const pod = await eventually(
      `Pod ${ns}/${name} done`,
      async () => {
        const p = await getObject(kube, path);
        return ['Succeeded', 'Failed'].includes(p?.status?.phase) ? p : undefined;
      },
      START_MS + SETTLE_S * 1_000 + Object.keys(targets).length * ATTEMPT_MS,
    );
    const log = (await kube.request('GET', `${path}/log`)).body as WireObject | string;
    const text = typeof log === 'string' ? log : String(log?.message ?? '');
    const verdicts = Object.fromEntries(
      text
        .split('\n')
        .map((l) => /^(\S+) (yes|no)$/.exec(l.trim()))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m) => [m[1]!, m[2] === 'yes']),
    );
    const missing = Object.keys(targets).filter((k) => !(k in verdicts));
    if (pod.status.phase !== 'Succeeded' || missing.length)
      throw new Error(`Pod ${ns}/${name} ${pod.status.phase}, no verdict for ${missing.join(', ')}; its log:\n${text}`);
    return verdicts;
  } finally {
    await kube.request('DELETE', `${path}?gracePeriodSeconds=0`);
  }
}
