/**
 * A real OCI registry on the node's network (docs/decisions/crossplane-deployed.md): Debian's `docker-registry` 2.8.2
 * (CNCF distribution), listening on the node's address inside its network namespace with a certificate of a CA of the
 * run. containerd trusts that CA for this registry only (`certs.d/<host:port>/hosts.toml`), so the kubelet PULLS Pod
 * images from it; Crossplane trusts it through its chart's `registryCaBundleConfig`. The test process pushes through
 * `node.forward` (HTTP CONNECT into the node), so no address of the node exists outside its namespace; the
 * certificate names both the node address and 127.0.0.1.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ensurePrograms } from '../tools/programs';
import { createCa } from '../cluster/pki';
import { type Proc, waitReady } from '../cluster/processes';
import type { Node } from './node';

/** The registry's port on the node's address. */
const REGISTRY_PORT = 5000;

export interface Registry {
  /** `<node ip>:5000`: how Pods, containerd and Crossplane name the registry. */
  readonly host: string;
  /** `127.0.0.1:<port>`: the same registry as the test process reaches it. */
  readonly hostFromTest: string;
  /** PEM of the CA its certificate is signed by. */
  readonly ca: string;
  /** A folder holding only `ca.crt`, for `buildah push --cert-dir`. */
  readonly certDir: string;
  /** The CA as a file, for SSL_CERT_FILE of Go clients (crank). */
  readonly caFile: string;
  /** Its storage (filesystem driver), e.g. to keep a copy of what was pushed. */
  readonly dataDir: string;
  readonly proc: Proc;
  /** Closes the host's forward; the registry process and its storage end with the node. */
  close(): Promise<void>;
}

/**
 * Starts the registry inside `node`; resolves when `/v2/` answers over TLS through the forward. `seed` fills its
 * storage before it starts (a copy of another run's storage: see platform/registry-cache.ts).
 */
export async function startRegistry(
  node: Node,
  log: (line: string) => void,
  seed?: (data: string) => Promise<void> | void,
): Promise<Registry> {
  // distribution 2.8.2 as Debian 12 packages it.
  const { 'docker-registry': registry } = await ensurePrograms(['docker-registry'], log);
  const dir = join(node.runDir, 'registry');
  const data = join(dir, 'data');
  mkdirSync(data, { recursive: true });
  await seed?.(data);
  const ca = await createCa('klutch-kit registry CA');
  const serving = await ca.issue({ commonName: 'registry', ips: [node.ip, '127.0.0.1'] });
  const certDir = join(dir, 'ca');
  mkdirSync(certDir, { recursive: true });
  const caFile = join(certDir, 'ca.crt');
  writeFileSync(caFile, ca.cert);
  writeFileSync(join(dir, 'tls.crt'), serving.cert);
  writeFileSync(join(dir, 'tls.key'), serving.key, { mode: 0o600 });
  const host = `${node.ip}:${REGISTRY_PORT}`;
  const config = join(dir, 'config.yml');
  writeFileSync(
    config,
    stringify({
      version: 0.1,
      log: { level: 'info', formatter: 'text', accesslog: { disabled: false } },
      storage: { filesystem: { rootdirectory: data }, delete: { enabled: true } },
      http: { addr: host, tls: { certificate: join(dir, 'tls.crt'), key: join(dir, 'tls.key') } },
    }),
  );
  // containerd reads this at each pull: this registry, over TLS, trusted by the run's CA and no other.
  const hosts = join(node.registryHostsDir, host);
  mkdirSync(hosts, { recursive: true });
  writeFileSync(
    join(hosts, 'hosts.toml'),
    `server = "https://${host}"\n\n[host."https://${host}"]\n  capabilities = ["pull", "resolve"]\n  ca = "${caFile}"\n`,
  );
  const proc = node.startProcess('registry', registry, ['serve', config]);
  const forward = await node.forward(node.ip, REGISTRY_PORT);
  const hostFromTest = `127.0.0.1:${forward.port}`;
  await waitReady(proc, async () => (await status(`https://${hostFromTest}/v2/`, ca.cert)) === 200, 30_000);
  log(`registry ${host} (distribution 2.8.2, TLS of the run's CA) ready; the tests reach it at ${hostFromTest}`);
  return {
    host,
    hostFromTest,
    ca: ca.cert,
    certDir,
    caFile,
    dataDir: data,
    proc,
    close: () => forward.close(),
  };
}

/**
 * Makes `registry` the node's mirror of the registry host of `upstream` (`ghcr.io/klutch-kit` → `ghcr.io`): containerd
 * asks it first for every image named there, by the same path, trusting the run's CA. What a platform with a mirror
 * of a public registry configures.
 */
export function mirrorOnNode(
  node: Pick<Node, 'registryHostsDir'>,
  registry: Pick<Registry, 'host' | 'caFile'>,
  upstreamPath: string,
): void {
  const upstream = upstreamPath.split('/')[0]!;
  const dir = join(node.registryHostsDir, upstream);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'hosts.toml'),
    `server = "https://${upstream}"\n\n[host."https://${registry.host}"]\n  capabilities = ["pull", "resolve"]\n  ca = "${registry.caFile}"\n`,
  );
}

/** The HTTP status of a GET, verifying the server against `ca`; 0 when it cannot connect. */
export function status(url: string, ca: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, { ca, timeout: 5_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}
