/**
 * The kubeconfig a provider hands a consumer (in the BindingResponse, and in the `kubeconfig` Secret the konnector
 * copies on every rotation) is data from the other side of a trust boundary, never configuration: a kubeconfig can
 * run programs (`exec`, `auth-provider` with `cmd-path`), read local files (`tokenFile`, `certificate-authority`,
 * `client-key`), turn TLS off (`insecure-skip-tls-verify`) or send every request through a proxy (`proxy-url`).
 *
 * `reduceProviderKubeconfig` keeps exactly what Klutch's backend writes — one https server, its inline CA, an
 * optional TLS server name, a bearer token and the context's namespace — and refuses everything else by name. With a
 * `pin` (the binding's current server and CA), a rotated kubeconfig may change only the token: a provider cannot
 * move a binding to another server or CA behind the app cluster's back.
 */
import { parse, stringify } from 'yaml';

/** Where a provider API server is reached. */
export interface ProviderEndpoint {
  /** https URL. */
  readonly server: string;
  /** PEM CA bundle, inlined as `certificate-authority-data`; absent: the system roots. */
  readonly ca?: string;
  /** TLS server name, when it differs from the server's host. */
  readonly serverName?: string;
}

export interface ProviderKubeconfig extends ProviderEndpoint {
  /** The consumer's cluster namespace on the provider (the context's namespace). */
  readonly namespace: string;
  readonly token: string;
  /** The canonical YAML of exactly these fields (cluster, context and user named `default`, as Klutch writes it). */
  readonly yaml: string;
}

export type ReducedKubeconfig =
  | ({ readonly ok: true } & ProviderKubeconfig)
  | {
      readonly ok: false;
      /** `KubeconfigInvalid` (not usable), `KubeconfigUnsafe` (asks for something never accepted from a provider),
       * `KubeconfigMoved` (server or CA differ from the pinned ones). */
      readonly reason: 'KubeconfigInvalid' | 'KubeconfigUnsafe' | 'KubeconfigMoved';
      /** The offending field, as a path (`users[default].user.exec`), when there is one. */
      readonly field?: string;
      readonly message: string;
    };

/** The kubeconfig as Klutch's backend writes it: cluster, context and user all `default`, the context in `namespace`. */
export function providerKubeconfigYaml(t: ProviderEndpoint, namespace: string, token: string): string {
  // The yaml library's stringify is a fair part of a bind's CPU (two kubeconfigs per bind): an endpoint's text is made
  // once with placeholders, and a namespace and token that it would write plain are put in by replacing them.
  if (!PLAIN.test(namespace) || !PLAIN.test(token) || KEYWORD.test(namespace) || KEYWORD.test(token))
    return providerKubeconfigDocument(t, namespace, token);
  const key = JSON.stringify([t.server, t.ca ?? '', t.serverName ?? '']);
  let template = templates.get(key);
  if (template === undefined) {
    if (templates.size >= 16) templates.clear();
    template = providerKubeconfigDocument(t, NAMESPACE_SLOT, TOKEN_SLOT);
    templates.set(key, template);
  }
  return template.replace(NAMESPACE_SLOT, namespace).replace(TOKEN_SLOT, token);
}

/** Scalars the yaml library writes as they are (no quotes, no escapes): DNS labels, JWTs. */
const PLAIN = /^[A-Za-z][A-Za-z0-9._-]*$/;
/** ...unless they would read back as something other than a string. */
const KEYWORD = /^(?:true|false|null|yes|no|on|off|y|n)$/i;
const NAMESPACE_SLOT = 'klutchKitNamespaceSlot7f3a';
const TOKEN_SLOT = 'klutchKitTokenSlot7f3a';
/** Texts per endpoint (a backend has one; bounded for whoever calls this with many). */
const templates = new Map<string, string>();

/** The kubeconfig written by the yaml library, without the template: what `providerKubeconfigYaml` must equal byte for byte. */
export function providerKubeconfigDocument(t: ProviderEndpoint, namespace: string, token: string): string {
  return stringify(
    {
      apiVersion: 'v1',
      clusters: [
        {
          cluster: {
            ...(t.ca ? { 'certificate-authority-data': Buffer.from(t.ca).toString('base64') } : {}),
            server: t.server,
            ...(t.serverName ? { 'tls-server-name': t.serverName } : {}),
          },
          name: 'default',
        },
      ],
      contexts: [{ context: { cluster: 'default', namespace, user: 'default' }, name: 'default' }],
      'current-context': 'default',
      kind: 'Config',
      preferences: {},
      users: [{ name: 'default', user: { token } }],
    },
    { lineWidth: 0 },
  );
}

/** Cluster fields that would make the client trust, or talk to, something other than the server and its CA. */
const UNSAFE_CLUSTER: Record<string, string> = {
  'certificate-authority': 'reads a CA file from the local disk',
  'insecure-skip-tls-verify': 'turns off TLS verification',
  'proxy-url': 'sends every request through a proxy',
};
/** User fields that would run a program, read a local file, or authenticate as someone else. */
const UNSAFE_USER: Record<string, string> = {
  exec: 'runs a program on this machine',
  'auth-provider': 'runs an authentication plugin (its cmd-path is a program on this machine)',
  tokenFile: 'reads a token file from the local disk',
  'client-certificate': 'reads a certificate file from the local disk',
  'client-key': 'reads a key file from the local disk',
  'client-certificate-data': 'authenticates with a client certificate; a provider hands out bearer tokens only',
  'client-key-data': 'authenticates with a client certificate; a provider hands out bearer tokens only',
  username: 'authenticates with a password; a provider hands out bearer tokens only',
  password: 'authenticates with a password; a provider hands out bearer tokens only',
  as: 'impersonates another user',
  'as-uid': 'impersonates another user',
  'as-groups': 'impersonates other groups',
  'as-user-extra': 'impersonates another user',
};

type Named<T> = { name?: unknown } & Record<string, T>;
const record = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/**
 * Reduces a provider's kubeconfig to server, CA, server name, namespace and token, or says why it cannot be used.
 * `where` names the object it came from in messages (`Secret klutch-bind/kubeconfig-x key "kubeconfig"`).
 */
export function reduceProviderKubeconfig(text: string, where: string, pin?: ProviderEndpoint): ReducedKubeconfig {
  const invalid = (message: string, field?: string): ReducedKubeconfig => ({
    ok: false,
    reason: 'KubeconfigInvalid',
    ...(field ? { field } : {}),
    message: `${where}: ${message}`,
  });
  let doc: Record<string, unknown> | undefined;
  try {
    doc = record(parse(text));
  } catch (e) {
    return invalid(`not a kubeconfig: ${(e as Error).message}`);
  }
  if (!doc) return invalid('not a kubeconfig: not a YAML mapping');
  const current = doc['current-context'];
  if (typeof current !== 'string' || !current) return invalid('the kubeconfig has no current-context', 'current-context');
  const find = (list: string, name: unknown): Record<string, unknown> | undefined => {
    const items = Array.isArray(doc![list]) ? (doc![list] as Named<unknown>[]) : [];
    return items.map(record).find((i) => i?.name === name);
  };
  const ctxEntry = find('contexts', current);
  const ctx = record(ctxEntry?.context);
  if (!ctx) return invalid(`the current-context "${current}" names no context`, 'current-context');
  const clusterEntry = record(find('clusters', ctx.cluster)?.cluster);
  const userEntry = record(find('users', ctx.user)?.user);
  if (!clusterEntry) return invalid(`context "${current}" names no cluster`, `contexts[${current}].context.cluster`);
  if (!userEntry) return invalid(`context "${current}" names no user with credentials`, `contexts[${current}].context.user`);
  const clusterPath = `clusters[${String(ctx.cluster)}].cluster`;
  const userPath = `users[${String(ctx.user)}].user`;

  const unsafe = (field: string, what: string): ReducedKubeconfig => ({
    ok: false,
    reason: 'KubeconfigUnsafe',
    field,
    message: `${where}: ${field} ${what}; a provider's kubeconfig may hold only a server, its CA and a bearer token — refused (bind again with a provider you trust, and tell its operator)`,
  });
  for (const [k, why] of Object.entries(UNSAFE_CLUSTER)) {
    const v = clusterEntry[k];
    if (v !== undefined && v !== null && v !== false && v !== '') return unsafe(`${clusterPath}.${k}`, why);
  }
  for (const [k, why] of Object.entries(UNSAFE_USER)) {
    const v = userEntry[k];
    if (v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && v.length === 0)) return unsafe(`${userPath}.${k}`, why);
  }

  const server = clusterEntry.server;
  if (typeof server !== 'string' || !server) return invalid('the current context names no cluster server', `${clusterPath}.server`);
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return invalid(`the server "${server}" is not a URL`, `${clusterPath}.server`);
  }
  if (url.protocol !== 'https:') return invalid(`the server "${server}" is not https`, `${clusterPath}.server`);
  if (url.username || url.password) return unsafe(`${clusterPath}.server`, 'carries credentials in its URL');
  const caData = clusterEntry['certificate-authority-data'];
  if (caData !== undefined && typeof caData !== 'string')
    return invalid('certificate-authority-data is not a string', `${clusterPath}.certificate-authority-data`);
  const ca = caData ? Buffer.from(caData, 'base64').toString('utf8') : undefined;
  if (ca !== undefined && !ca.includes('-----BEGIN CERTIFICATE-----'))
    return invalid('certificate-authority-data holds no PEM certificate', `${clusterPath}.certificate-authority-data`);
  const serverName = clusterEntry['tls-server-name'];
  if (serverName !== undefined && typeof serverName !== 'string')
    return invalid('tls-server-name is not a string', `${clusterPath}.tls-server-name`);
  const namespace = ctx.namespace;
  if (typeof namespace !== 'string' || !namespace)
    return invalid(
      "the kubeconfig's current context has no namespace; it must name the cluster namespace the provider created for this app cluster",
      `contexts[${current}].context.namespace`,
    );
  const token = userEntry.token;
  if (typeof token !== 'string' || !token) return invalid('the user has no bearer token', `${userPath}.token`);
  if (/[\r\n]/.test(token)) return invalid('the token spans several lines', `${userPath}.token`);

  if (pin) {
    const moved = (field: string, what: string): ReducedKubeconfig => ({
      ok: false,
      reason: 'KubeconfigMoved',
      field,
      message: `${where}: ${what}; a provider may only rotate the token of a binding, never move it — refused (to move a binding, bind again)`,
    });
    if (server !== pin.server) return moved(`${clusterPath}.server`, `the server "${server}" is not the binding's "${pin.server}"`);
    if ((ca ?? '') !== (pin.ca ?? '')) return moved(`${clusterPath}.certificate-authority-data`, "the CA is not the binding's");
    if ((serverName ?? '') !== (pin.serverName ?? ''))
      return moved(
        `${clusterPath}.tls-server-name`,
        `the TLS server name "${serverName ?? ''}" is not the binding's "${pin.serverName ?? ''}"`,
      );
  }
  const endpoint: ProviderEndpoint = { server, ...(ca ? { ca } : {}), ...(serverName ? { serverName } : {}) };
  return { ok: true, ...endpoint, namespace, token, yaml: providerKubeconfigYaml(endpoint, namespace, token) };
}
