/**
 * The platform's S3-compatible object store (issue 35, docs/decisions/object-store.md): the Versity S3 Gateway
 * (harness/tools/versitygw.ts) as a Pod on the control plane's node, its `posix` backend and internal IAM on a
 * volume, TLS of a CA of its own, root credentials made for this platform. Each tenant gets a user of the role `user`
 * and a bucket that user owns, made through the gateway's admin API (backend/backup-store/versitygw.ts, the bind
 * backend's client of it): versitygw lets a `user` reach only the buckets it owns and create none, so one tenant's
 * keys open no other tenant's backups.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, chownSync, copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { basename, dirname, join } from 'node:path';
import { storeAdmin } from '../../backend/backup-store/versitygw';
import { apply } from '../cluster/kube';
import { eventually, getObject, type Kube, requireOk } from '../cluster/kube';
import type { AttachedNode } from '../node/attach';
import { status } from '../node/registry';
import { baseLayout } from '../node/cnpg-images';
import { localVolumes } from '../node/cnpg';
import { ensureArchive } from '../node/images';
import { keyedArchive } from '../node/platform-images';
import { createCa } from '../cluster/pki';
import { ensurePrograms, IMAGE_PROGRAMS } from '../tools/programs';
import { ensureVersitygw, VERSITYGW_VERSION } from '../tools/versitygw';
import { podFailure } from './pods';
import { PROBE_TIMEOUT_SECONDS } from '../../lib/probes';

/** Upstream's image name (Docker Hub), made locally: the binary where upstream's Dockerfile puts it. */
const OBJECT_STORE_IMAGE = `docker.io/versity/versitygw:${VERSITYGW_VERSION}`;
export const OBJECT_STORE_NAMESPACE = 'klutch-object-store';
/** The gateway's Deployment, Service and the name its certificate is issued for. */
const NAME = 'versitygw';
const PORT = 7070;
/** distroless' `nonroot`: the gateway needs no privilege, and its volume is made owned by it. */
const UID = 65532;
/** S3's default region, which the gateway signs with unless told otherwise. */
const OBJECT_STORE_REGION = 'us-east-1';
/** Bump when what goes into the image changes. */
const LAYOUT = 1;

/** The gateway's image as an OCI archive in the cache, keyed by the binary; progress to `log`. */
async function ensureObjectStoreImage(log: (line: string) => void): Promise<string> {
  await ensurePrograms(IMAGE_PROGRAMS, log);
  const binary = await ensureVersitygw(log);
  const key = createHash('sha256')
    .update(`${OBJECT_STORE_IMAGE}\n${basename(dirname(binary))}\nlayout ${LAYOUT}\n`)
    .digest('hex')
    .slice(0, 12);
  return ensureArchive(
    keyedArchive('versitygw', key),
    OBJECT_STORE_IMAGE,
    (root) => {
      mkdirSync(join(root, 'usr', 'local', 'bin'), { recursive: true });
      copyFileSync(binary, join(root, 'usr', 'local', 'bin', 'versitygw'));
      chmodSync(join(root, 'usr', 'local', 'bin', 'versitygw'), 0o755);
      baseLayout(root, `versitygw ${VERSITYGW_VERSION}`);
    },
    // Upstream's entrypoint is a shell script that turns variables into flags; here the Pod names the flags itself.
    ['--user', `${UID}:${UID}`, '--workingdir', '/', '--entrypoint', '["/usr/local/bin/versitygw"]'],
    log,
  );
}

/** A tenant's place in the store: its bucket and the only keys that open it. */
export interface TenantBucket {
  readonly bucket: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

export interface ObjectStore {
  /** The URL Pods of the control plane reach the store at (the Service's DNS name, TLS of `ca`). */
  readonly endpoint: string;
  /** The URL this process reaches the store at: a forward into the node, TLS of `ca` (127.0.0.1 is in its names). */
  readonly endpointFromHost: string;
  /** PEM of the CA the store's serving certificate is issued by. */
  readonly ca: string;
  /** A file holding `ca`, for clients that read the CA from a file. */
  readonly caFile: string;
  readonly namespace: string;
  /** The admin API's address from this process and the root keys it is signed with. */
  readonly admin: { readonly endpoint: string; readonly accessKeyId: string; readonly secretAccessKey: string };
  /** A user of the role `user` and a bucket it owns, named `name` (a bucket name: 3-63 of a-z, 0-9, `-`). */
  addTenant(name: string): Promise<TenantBucket>;
  /** Ends the forward; the Pods stay until `remove()`. */
  close(): Promise<void>;
  /** Deletes the namespace, its volume and the forward. */
  remove(): Promise<void>;
}

const BUCKET_NAME = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

/** Keys as S3 stores make them: an access key of 20 upper-case characters, a secret of 40. */
function keys(): { access: string; secret: string } {
  return {
    access: randomBytes(15)
      .toString('base64')
      .replace(/[^A-Za-z0-9]/g, 'X')
      .toUpperCase()
      .slice(0, 20),
    secret: randomBytes(30)
      .toString('base64')
      .replace(/[^A-Za-z0-9]/g, 'x')
      .slice(0, 40),
  };
}

/**
 * Deploys the store into `namespace` on the control plane whose node is `node` and resolves once it answers its
 * health check through the forward. The volume lives in the node's run folder (a local PersistentVolume).
 */
export async function deployObjectStore(
  kube: Kube,
  node: Pick<AttachedNode, 'runDir' | 'importImage' | 'forward' | 'podLogs'>,
  o: { readonly namespace?: string; readonly log: (line: string) => void },
): Promise<ObjectStore> {
  const ns = o.namespace ?? OBJECT_STORE_NAMESPACE;
  const image = await ensureObjectStoreImage(o.log);
  await node.importImage(image);
  const service = `${NAME}.${ns}.svc`;
  const ca = await createCa('klutch-kit object store CA', 7);
  const serving = await ca.issue({
    commonName: service,
    dnsNames: [NAME, `${NAME}.${ns}`, service, `${service}.cluster.local`],
    ips: ['127.0.0.1'],
    validDays: 7,
  });
  const dir = mkdtempSync(join(node.runDir, 'object-store-'));
  const caFile = join(dir, 'ca.crt');
  writeFileSync(caFile, ca.cert);
  const root = keys();

  await apply(kube, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: ns, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } },
  });
  await apply(kube, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `${NAME}-tls`, namespace: ns },
    type: 'kubernetes.io/tls',
    stringData: { 'tls.crt': serving.cert, 'tls.key': serving.key },
  });
  await apply(kube, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `${NAME}-root`, namespace: ns },
    stringData: { ROOT_ACCESS_KEY: root.access, ROOT_SECRET_KEY: root.secret },
  });
  // One volume for the buckets and the IAM file, in folders of their own: the IAM folder inside the buckets' root
  // would be listed as a bucket.
  const claim = `${NAME}-data`;
  const [pv] = await localVolumes(kube, dir, 1, '1Gi', `${ns}-data`, [{ namespace: ns, name: claim }], UID);
  for (const sub of ['iam', 'buckets']) {
    mkdirSync(join(dir, `${ns}-data-0`, sub), { recursive: true });
    chownSync(join(dir, `${ns}-data-0`, sub), UID, UID);
  }
  await apply(kube, {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: claim, namespace: ns },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeName: pv },
  });
  const labels = { 'app.kubernetes.io/name': NAME, 'app.kubernetes.io/part-of': 'klutch-kit-object-store' };
  await apply(kube, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: NAME, namespace: ns, labels },
    spec: {
      replicas: 1,
      // One Pod at a time on a ReadWriteOnce volume: the new one starts once the old one is gone.
      strategy: { type: 'Recreate' },
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          automountServiceAccountToken: false,
          securityContext: { runAsNonRoot: true, runAsUser: UID, runAsGroup: UID, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: NAME,
              image: OBJECT_STORE_IMAGE,
              imagePullPolicy: 'Never',
              args: [
                '--port',
                `:${PORT}`,
                '--cert',
                '/tls/tls.crt',
                '--key',
                '/tls/tls.key',
                '--iam-dir',
                '/data/iam',
                '--health',
                '/health',
                '--quiet',
                'posix',
                '/data/buckets',
              ],
              envFrom: [{ secretRef: { name: `${NAME}-root` } }],
              ports: [{ name: 's3', containerPort: PORT }],
              readinessProbe: {
                httpGet: { path: '/health', port: PORT, scheme: 'HTTPS' },
                periodSeconds: 2,
                timeoutSeconds: PROBE_TIMEOUT_SECONDS,
              },
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
              volumeMounts: [
                { name: 'data', mountPath: '/data' },
                { name: 'tls', mountPath: '/tls', readOnly: true },
              ],
            },
          ],
          volumes: [
            { name: 'data', persistentVolumeClaim: { claimName: claim } },
            { name: 'tls', secret: { secretName: `${NAME}-tls` } },
          ],
        },
      },
    },
  });
  await apply(kube, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: NAME, namespace: ns, labels },
    spec: { selector: labels, ports: [{ name: 's3', port: PORT, targetPort: PORT }] },
  });
  await waitAvailable(kube, node, ns, labels);
  const svc = await requireOk(kube, 'GET', `/api/v1/namespaces/${ns}/services/${NAME}`);
  const forward = await node.forward(svc.spec.clusterIP as string, PORT);
  const endpointFromHost = `https://127.0.0.1:${forward.port}`;
  // Ready Pods are not yet a Service that answers: kube-proxy programs the address once the endpoints are published.
  await eventually(
    `the object store answering through its Service (${endpointFromHost}/health)`,
    async () => ((await status(`${endpointFromHost}/health`, ca.cert)) === 200 ? true : undefined),
    60_000,
  );

  // The admin API answers on the S3 port, signed with the root keys: the client the bind backend makes tenants with.
  const admin = storeAdmin({ endpoint: endpointFromHost, accessKeyId: root.access, secretAccessKey: root.secret, ca: ca.cert });
  return {
    endpoint: `https://${service}:${PORT}`,
    endpointFromHost,
    ca: ca.cert,
    caFile,
    namespace: ns,
    addTenant: async (name) => {
      if (!BUCKET_NAME.test(name))
        throw new Error(`tenant "${name}": a bucket name is 3-63 of a-z, 0-9 and "-", starting and ending with a letter or digit`);
      const k = keys();
      if ((await admin.createUser(k.access, k.secret)) !== 'created') throw new Error(`tenant "${name}": its new access key exists`);
      if ((await admin.createBucket(name, k.access)) !== 'created') throw new Error(`tenant "${name}": the bucket exists`);
      return { bucket: name, accessKeyId: k.access, secretAccessKey: k.secret };
    },
    admin: { endpoint: endpointFromHost, accessKeyId: root.access, secretAccessKey: root.secret },
    close: async () => {
      await admin.close();
      await forward.close();
    },
    remove: async () => {
      await admin.close();
      await forward.close();
      await kube.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
      await eventually(
        `namespace ${ns} gone`,
        async () => ((await getObject(kube, `/api/v1/namespaces/${ns}`)) ? undefined : true),
        120_000,
      );
      await kube.request('DELETE', `/api/v1/persistentvolumes/${pv}`).catch(() => undefined);
    },
  };
}

/** Resolves when the store's Pod is Ready; fails with the Pod's state and log when it does not come. */
async function waitAvailable(
  kube: Kube,
  node: Pick<AttachedNode, 'podLogs'>,
  ns: string,
  labels: Readonly<Record<string, string>>,
): Promise<void> {
  const selector = Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  try {
    await eventually(
      `the object store's Pod Ready in ${ns}`,
      async () => {
        const d = await getObject(kube, `/apis/apps/v1/namespaces/${ns}/deployments/${NAME}`);
        return d?.status?.readyReplicas === 1 && d.status.updatedReplicas === 1 && d.status.replicas === 1 ? true : undefined;
      },
      120_000,
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}\n${await podFailure(kube, node, ns, selector)}`);
  }
}

/** An S3 client of this process for `keys` (none: anonymous), trusting only the store's CA, path-style as the store serves. */
export function storeClient(store: Pick<ObjectStore, 'endpointFromHost' | 'ca'>, keys?: TenantBucket): S3Client {
  return new S3Client({
    endpoint: store.endpointFromHost,
    region: OBJECT_STORE_REGION,
    forcePathStyle: true,
    ...(keys
      ? { credentials: { accessKeyId: keys.accessKeyId, secretAccessKey: keys.secretAccessKey } }
      : { signer: { sign: async (request) => request } }),
    requestHandler: { httpsAgent: new Agent({ ca: store.ca }) },
    maxAttempts: 1,
  });
}
