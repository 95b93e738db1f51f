/**
 * The app cluster's kubeconfig of an AppClusterBinding (the Secret its `spec.kubeconfigSecretRef` names). The
 * platform operator writes it, but whoever may create an AppClusterBinding and a Secret in a namespace may write it,
 * and it is used by the backend and by a konnector running on the control plane: so it is reduced, like a provider's
 * kubeconfig, to what reaches one API server — an https server, its inline CA, a TLS server name, and a bearer token
 * or an inline client certificate — and anything that would run a program, read a file of the control plane's Pod,
 * turn TLS off or go through a proxy is refused by name. Clients are built from the reduced fields only.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';

export interface AppClusterKubeconfig {
  readonly server: string;
  /** PEM. */
  readonly ca?: string;
  readonly serverName?: string;
  readonly token?: string;
  /** PEM client certificate and key, both or neither. */
  readonly certData?: string;
  readonly keyData?: string;
}

export type AppClusterKubeconfigCheck =
  | ({ readonly ok: true } & AppClusterKubeconfig)
  | { readonly ok: false; readonly reason: 'KubeconfigInvalid' | 'KubeconfigUnsafe'; readonly message: string };

const UNSAFE: Record<string, string> = {
  'certificate-authority': 'reads a CA file from the disk of the control plane',
  'insecure-skip-tls-verify': 'turns off TLS verification',
  'proxy-url': 'sends every request through a proxy',
  exec: 'runs a program on the control plane',
  'auth-provider': 'runs an authentication plugin on the control plane',
  tokenFile: 'reads a token file from the disk of the control plane',
  'client-certificate': 'reads a certificate file from the disk of the control plane',
  'client-key': 'reads a key file from the disk of the control plane',
  username: 'authenticates with a password',
  password: 'authenticates with a password',
  as: 'impersonates another user',
  'as-groups': 'impersonates other groups',
  'as-uid': 'impersonates another user',
  'as-user-extra': 'impersonates another user',
};

const record = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/** Checks and reduces the app cluster's kubeconfig; `where` names its Secret and key in messages. */
export function checkAppClusterKubeconfig(text: string, where: string): AppClusterKubeconfigCheck {
  const invalid = (m: string): AppClusterKubeconfigCheck => ({ ok: false, reason: 'KubeconfigInvalid', message: `${where}: ${m}` });
  let doc: Record<string, unknown> | undefined;
  try {
    doc = record(parse(text));
  } catch (e) {
    return invalid(`not a kubeconfig: ${(e as Error).message}`);
  }
  if (!doc) return invalid('not a kubeconfig (not a YAML mapping)');
  const current = doc['current-context'];
  if (typeof current !== 'string' || !current) return invalid('the kubeconfig has no current-context');
  const find = (list: string, name: unknown) =>
    (Array.isArray(doc![list]) ? (doc![list] as unknown[]) : []).map(record).find((i) => i?.name === name);
  const ctx = record(find('contexts', current)?.context);
  if (!ctx) return invalid(`current-context "${current}" names no context`);
  const cluster = record(find('clusters', ctx.cluster)?.cluster);
  const user = record(find('users', ctx.user)?.user) ?? {};
  if (!cluster) return invalid(`context "${current}" names no cluster`);
  for (const [part, fields] of [
    [`clusters[${String(ctx.cluster)}].cluster`, cluster],
    [`users[${String(ctx.user)}].user`, user],
  ] as const) {
    for (const [k, why] of Object.entries(UNSAFE)) {
      const v = fields[k];
      if (v !== undefined && v !== null && v !== false && v !== '' && !(Array.isArray(v) && v.length === 0))
        return {
          ok: false,
          reason: 'KubeconfigUnsafe',
          message: `${where}: ${part}.${k} ${why}; an app cluster's kubeconfig may hold only a server, its inline CA and a token or inline client certificate`,
        };
    }
  }
  const server = cluster.server;
  if (typeof server !== 'string' || !URL.canParse(server) || new URL(server).protocol !== 'https:')
    return invalid(`the cluster's server "${String(server ?? '')}" is not an https URL`);
  const b64 = (k: string): string | undefined =>
    typeof cluster[k] === 'string' || typeof user[k] === 'string'
      ? Buffer.from(String(cluster[k] ?? user[k]), 'base64').toString('utf8')
      : undefined;
  const ca = b64('certificate-authority-data');
  const certData = b64('client-certificate-data');
  const keyData = b64('client-key-data');
  const token = typeof user.token === 'string' && user.token ? user.token : undefined;
  if (!token && !(certData && keyData))
    return invalid('the user has neither a token nor client-certificate-data and client-key-data; give one of them');
  if (!certData !== !keyData) return invalid('client-certificate-data and client-key-data go together');
  const serverName = typeof cluster['tls-server-name'] === 'string' ? cluster['tls-server-name'] : undefined;
  return {
    ok: true,
    server,
    ...(ca ? { ca } : {}),
    ...(serverName ? { serverName } : {}),
    ...(token ? { token } : {}),
    ...(certData && keyData ? { certData, keyData } : {}),
  };
}

/** A KubeConfig of exactly the reduced fields; `into` reloads an existing one in place. */
export function appClusterKubeConfig(k: AppClusterKubeconfig, into = new KubeConfig()): KubeConfig {
  const b = (s: string | undefined) => (s ? Buffer.from(s).toString('base64') : undefined);
  into.loadFromOptions({
    clusters: [
      {
        name: 'app',
        server: k.server,
        skipTLSVerify: false,
        ...(k.ca ? { caData: b(k.ca) } : {}),
        ...(k.serverName ? { tlsServerName: k.serverName } : {}),
      },
    ],
    users: [
      { name: 'app', ...(k.token ? { token: k.token } : {}), ...(k.certData ? { certData: b(k.certData), keyData: b(k.keyData) } : {}) },
    ],
    contexts: [{ name: 'app', cluster: 'app', user: 'app' }],
    currentContext: 'app',
  });
  return into;
}
