/**
 * `kubectl bind <url>`: the provider's BindingProvider, the namespace (whose UID makes the cluster id), the login —
 * in a browser, or with --client-id the machine login (machine-login.ts) —, the provider kubeconfig Secret, then
 * `bindApiServices` for the requests of the BindingResponse(s).
 */
import type { V1Namespace } from '@kubernetes/client-node';
import { CliError, ExitCode } from '../errors';
import { isConflict, messageOf } from '../../lib/kube-errors';
import type { LoginFlags, MachineFlags } from '../flags';
import { clusterId } from '../ids';
import type { Io } from '../io';
import { appCluster, getOrUndefined, providerCluster, type Cluster } from '../kube';
import { findKubeconfigSecret, storeKubeconfig } from '../kubeconfig-secret';
import { login } from '../login';
import { machineLogin, machineMethod } from '../machine-login';
import { fetchProvider } from '../provider';
import { bindApiServices, readRequests, readStdin } from './apiservice';

/** The namespace, created when missing; its UID identifies this cluster to the provider. */
async function ensureNamespace(app: Cluster, name: string): Promise<{ readonly namespace: V1Namespace; readonly created: boolean }> {
  try {
    const have = await getOrUndefined(app.core.readNamespace({ name }));
    if (have) return { namespace: have, created: false };
    try {
      const body = { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
      return { namespace: await app.core.createNamespace({ body }), created: true };
    } catch (e) {
      if (isConflict(e)) return { namespace: await app.core.readNamespace({ name }), created: false };
      throw e;
    }
  } catch (e) {
    throw new CliError(
      `cannot read or create namespace ${name} in the app cluster ${app.server}: ${messageOf(e)}`,
      'check the kubeconfig (--kubeconfig, --context) and that you are a cluster admin there',
      ExitCode.Failed,
      { cause: e },
    );
  }
}

/**
 * The APIs a machine bind asks for: --api, then the resources of -f's APIServiceExportRequests, each once; a
 * request's `versions` asks for the first of them (the app cluster then gets that version of the API alone).
 */
async function machineApis(m: MachineFlags, io: Io): Promise<{ group: string; resource: string; version?: string }[]> {
  const fromFile = m.file
    ? readRequests(m.file, m.file === '-' ? await readStdin(io) : undefined).flatMap((r) =>
        r.spec.resources.map((x) => ({
          group: x.group ?? '',
          resource: x.resource,
          ...(x.versions?.[0] ? { version: x.versions[0] } : {}),
        })),
      )
    : [];
  const seen = new Set<string>();
  return [...m.apis, ...fromFile].filter((a) => !seen.has(`${a.resource}.${a.group}`) && seen.add(`${a.resource}.${a.group}`));
}

export async function bindCommand(flags: LoginFlags, io: Io): Promise<number> {
  const app = appCluster(flags, io.env);
  const provider = await fetchProvider(flags.url);
  const pretty = provider.document.providerPrettyName || new URL(flags.url).host;
  io.stderr.write(`Provider ${pretty} (${provider.document.version}) at ${flags.url}.\n`);
  const ns = await ensureNamespace(app, flags.namespace);
  // Even a dry run needs it: the provider knows this cluster by its UID, so a stand-in would bind another identity.
  if (ns.created)
    io.stderr.write(
      `Created namespace ${flags.namespace}: its UID identifies this cluster to the provider${flags.dryRun ? ' (a dry run needs it too)' : ''}.\n`,
    );
  const cid = clusterId(ns.namespace.metadata!.uid!);
  const binding = flags.machine
    ? await machineLogin({
        url: flags.url,
        method: machineMethod(flags.url, provider.machine, flags.machine.issuer),
        flags: flags.machine,
        apis: await machineApis(flags.machine, io),
        clusterId: cid,
        io,
      })
    : await login({
        authenticatedUrl: provider.authenticatedUrl,
        clusterId: cid,
        timeoutMs: flags.loginTimeoutMs,
        browser: flags.browser,
        io,
      });
  const who = binding.response.authentication.oauth2CodeGrant.id;
  io.stderr.write(
    `${flags.machine ? `Authenticated as client ${flags.machine.clientId} (${who})` : `Logged in as ${who}`}; the provider keeps this cluster's objects in namespace ${binding.namespace} on ${binding.server}.\n`,
  );
  let secret: string;
  if (flags.dryRun) {
    secret = (await findKubeconfigSecret(app, flags.namespace, binding.kubeconfig))?.metadata?.name ?? 'kubeconfig-<generated>';
  } else {
    const stored = await storeKubeconfig(app, flags.namespace, binding.kubeconfig).catch((e: unknown) => {
      throw new CliError(
        `cannot store the provider kubeconfig in namespace ${flags.namespace}: ${messageOf(e)}`,
        'run as a cluster admin of the app cluster',
        ExitCode.Failed,
        { cause: e },
      );
    });
    secret = stored.name;
    io.stderr.write(`${stored.reused ? 'Updated' : 'Stored'} the provider kubeconfig in Secret ${flags.namespace}/${secret}.\n`);
  }
  const p = providerCluster(binding.kubeconfig);
  return bindApiServices({
    app,
    provider: { ...p, prettyName: pretty },
    secret,
    requests: binding.response.requests,
    flags,
    io,
  });
}
