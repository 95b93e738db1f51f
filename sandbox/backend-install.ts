/**
 * Step 6 of the sandbox, started beside step 4: the platform's object store, the OpenID provider (on this machine,
 * bridged into the control plane's node) and the release's install bundle applied with `kubectl apply -k` once step 4
 * has published the release, the bind backend as Pods behind its Service (its image pulled by digest from the
 * registry), reached from this machine at a public URL of loopback.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BACKEND_CLIENT } from '../harness/parts/bind-backend';
import { Browser } from '../harness/login/browser';
import type { ClusterInfo } from '../harness/cluster/control-plane';
import { eventually, getObject, type Kube } from '../harness/cluster/kube';
import { exposeHostPort } from '../harness/node/host-port';
import type { Node } from '../harness/node/node';
import { startOidcProvider, type OidcTestProvider } from '../harness/login/oidc';
import { createCa } from '../harness/cluster/pki';
import { BACKEND_NAMESPACE, installBindBundle } from '../harness/platform/bind-bundle';
import { deployObjectStore } from '../harness/platform/object-store';
import { listenAt } from '../harness/platform/listen';
import { freePorts } from '../harness/cluster/processes';

export interface BackendInstallContext {
  /** The sandbox folder: the provider's logs, the backend's CA and its objects go below it. */
  readonly dir: string;
  /** Who logs in at the OpenID provider, and whom the bundle's templates let bind. */
  readonly user: string;
  readonly control: ClusterInfo;
  readonly kc: Kube;
  readonly cpNode: Node;
  readonly appNode: Node;
  /** The release whose install bundle is applied (its folder, once it is published). */
  readonly release: Promise<string>;
  /** What was started, stopped in reverse when the sandbox stops. */
  readonly cleanups: (() => Promise<void>)[];
  /** Aborted when step 4 fails: the bundle stops waiting for kinds that will never come. */
  readonly signal: AbortSignal;
  say(line: string): void;
}

/** What a kubectl bind from this machine needs of the backend and its OpenID provider. */
export interface InstalledBackend {
  readonly idp: OidcTestProvider;
  readonly publicUrl: string;
  readonly backendCa: string;
  /** Where this machine reaches the issuer's address in the control plane's node. */
  readonly idpRoute: { readonly host: string; readonly port: number };
  /** Where the control plane's external address is reached from here (host-routes.cjs). */
  readonly hostRoutes: Readonly<Record<string, number>>;
}

export async function installBackend(c: BackendInstallContext): Promise<InstalledBackend> {
  // The platform's object store first (seconds; the bundle waits for Crossplane's kinds anyway): the backend makes
  // each provider namespace's backup tenant there (docs/backups.md).
  const store = await deployObjectStore(c.kc, c.cpNode, { log: c.say });
  c.cleanups.push(() => store.close());
  c.say(`object store (the Versity S3 Gateway) at ${store.endpoint}: a bucket and keys per provider namespace, for cnpg backups`);
  const [idpPort, publicPort] = (await freePorts(2)) as [number, number];
  const url = `https://127.0.0.1:${publicPort}`;
  // The provider runs on the host; its issuer is the control plane node's address, bridged there.
  const i: OidcTestProvider = await startOidcProvider({
    issuerHost: c.cpNode.ip,
    port: idpPort,
    clients: [{ ...BACKEND_CLIENT, redirectUris: [`${url}/callback`] }],
    users: [{ sub: c.user }],
    logDir: join(c.dir, 'oidc-provider'),
  });
  c.cleanups.push(() => i.stop());
  const bridge = await exposeHostPort(c.cpNode, idpPort);
  c.cleanups.push(bridge.close);
  const forward = await c.cpNode.forward(c.cpNode.ip, idpPort);
  c.cleanups.push(forward.close);
  // The control plane's API server where the app cluster's konnector reaches it: the consumers' address.
  const cpPort = Number(new URL(c.control.server).port);
  const api = await exposeHostPort(c.appNode, cpPort);
  c.cleanups.push(api.close);
  const ca = await createCa('klutch-kit sandbox backend CA');
  const tls = await ca.issue({ commonName: '127.0.0.1', ips: ['127.0.0.1'] });
  writeFileSync(join(c.dir, 'backend-ca.crt'), ca.cert);
  const release = await c.release;
  await installBindBundle({
    cluster: c.control,
    node: c.cpNode,
    dist: release,
    dir: join(c.dir, 'backend'),
    issuer: i.issuer,
    issuerCa: i.ca,
    publicUrl: url,
    externalAddress: `https://${api.address}`,
    tls,
    // The bundle's backend binds an API only for whom its template names: the sandbox's user, for every API.
    bindAllowedSubjects: [c.user],
    backupStore: { endpoint: store.endpoint, ca: store.ca, admin: store.admin },
    log: c.say,
    signal: c.signal,
  });
  const svc = await getObject(c.kc, `/api/v1/namespaces/${BACKEND_NAMESPACE}/services/klutch-bind-backend`);
  if (!svc) throw new Error(`the install bundle made no Service ${BACKEND_NAMESPACE}/klutch-bind-backend`);
  const toService = await c.cpNode.forward(svc.spec.clusterIP, 443);
  c.cleanups.push(toService.close);
  c.cleanups.push(await listenAt(publicPort, () => toService.port));
  // kube-proxy programs the Service a moment after its endpoints turn ready: wait for the first answer.
  const browser = new Browser({ ca: [ca.cert] });
  await eventually(`the backend's Service answering ${url}/export`, async () => {
    const page = await browser.get(`${url}/export`).catch(() => undefined);
    return page?.status === 200 ? page : undefined;
  });
  c.say(`OpenID provider ${i.issuer} (user "${c.user}"), bridged into the control plane's node`);
  c.say(`bind backend Pods behind Service ${BACKEND_NAMESPACE}/klutch-bind-backend (${svc.spec.clusterIP}), public URL ${url}`);
  return {
    idp: i,
    publicUrl: url,
    backendCa: ca.cert,
    idpRoute: { host: '127.0.0.1', port: forward.port },
    hostRoutes: { [api.address]: cpPort },
  };
}
