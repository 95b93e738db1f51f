/**
 * The APIServiceBinding in the app cluster: named `<resource>.<group>` (the export's name), in the konnector's
 * namespace, pointing at the provider kubeconfig Secret, with the answered permission claims. Binding again through
 * the same Secret updates the answers; a binding of that name through another provider is refused (its Secret
 * reference is immutable).
 */
import {
  APIServiceBindingConditions,
  BIND_API_VERSION,
  bindObjects,
  BindResources,
  Kinds,
  KUBECONFIG_SECRET_KEY,
  type AcceptablePermissionClaim,
  type APIServiceBinding,
} from '../exports/bind-api';
import { CliError, ExitCode } from './errors';
import { messageOf } from '../lib/kube-errors';
import { retryBusy, sleep, type Cluster } from './kube';

/** The app cluster's APIServiceBindings (exports/bind-api's client). */
export const bindingsOf = (app: Cluster) => bindObjects<APIServiceBinding>(app.custom, BindResources.bindings);

export function bindingObject(
  name: string,
  namespace: string,
  secret: string,
  claims: readonly AcceptablePermissionClaim[],
): APIServiceBinding {
  return {
    apiVersion: BIND_API_VERSION,
    kind: Kinds.APIServiceBinding,
    metadata: { name, namespace },
    spec: {
      kubeconfigSecretRef: { name: secret, namespace, key: KUBECONFIG_SECRET_KEY },
      ...(claims.length ? { permissionClaims: [...claims] } : {}),
    },
  };
}

export async function getBinding(app: Cluster, namespace: string, name: string): Promise<APIServiceBinding | undefined> {
  return bindingsOf(app).get({ namespace, name });
}

/** Creates the binding, or updates the claims of one through the same Secret. */
export async function applyBinding(app: Cluster, want: APIServiceBinding): Promise<'created' | 'updated'> {
  const { name, namespace } = want.metadata as { name: string; namespace: string };
  const bindings = bindingsOf(app);
  let have = await getBinding(app, namespace, name);
  try {
    if (!have) {
      if (await retryBusy(() => bindings.create(want))) return 'created';
      // Made between the read and the create (another kubectl bind): updated like one found.
      have = await getBinding(app, namespace, name);
      if (!have) throw new Error('it was made and deleted again while kubectl bind wrote it; bind again');
    }
    const ref = have.spec.kubeconfigSecretRef;
    if (ref.name !== want.spec.kubeconfigSecretRef.name || ref.namespace !== want.spec.kubeconfigSecretRef.namespace)
      throw new CliError(
        `APIServiceBinding ${namespace}/${name} already binds this API through another provider (Secret ${ref.namespace}/${ref.name})`,
        `remove it first: kubectl bind remove ${name}${namespace === 'klutch-bind' ? '' : ` -n ${namespace}`}`,
      );
    await retryBusy(() => bindings.patch({ namespace, name }, { spec: { permissionClaims: want.spec.permissionClaims ?? null } }));
    return 'updated';
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw new CliError(
      `cannot write APIServiceBinding ${namespace}/${name}: ${messageOf(e)}`,
      'run kubectl bind as a cluster admin of the app cluster',
      ExitCode.Failed,
      { cause: e },
    );
  }
}

export const readyOf = (b: APIServiceBinding | undefined) =>
  b?.status?.conditions?.find((c) => c.type === APIServiceBindingConditions.Ready);

/** Waits until the konnector reports the binding Ready; returns the binding as last seen. */
export async function awaitReady(
  app: Cluster,
  namespace: string,
  name: string,
  o: { readonly timeoutMs: number; readonly progress: (line: string) => void; readonly signal: AbortSignal },
): Promise<{ ready: boolean; binding: APIServiceBinding | undefined }> {
  const deadline = Date.now() + o.timeoutMs;
  let said = '';
  let b: APIServiceBinding | undefined;
  for (;;) {
    b = await getBinding(app, namespace, name).catch(() => b);
    const ready = readyOf(b);
    if (ready?.status === 'True') return { ready: true, binding: b };
    const line = ready
      ? `waiting for the konnector: ${ready.reason}${ready.message ? `: ${ready.message}` : ''}`
      : 'waiting for the konnector to pick up the binding';
    if (line !== said) o.progress(line);
    said = line;
    if (o.signal.aborted) throw new CliError('interrupted while waiting for the binding', undefined, ExitCode.Interrupted);
    if (Date.now() > deadline) return { ready: false, binding: b };
    await sleep(500, o.signal);
  }
}
