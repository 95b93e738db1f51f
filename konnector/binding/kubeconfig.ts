/**
 * The `SecretValid` check of an APIServiceBinding: its kubeconfig Secret exists, holds a `kubeconfig` key, and that
 * kubeconfig names a server and — the provider namespace the konnector works in — a namespace in its current context.
 * Every failure names the Secret, the field and the fix.
 */
import { KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { KUBECONFIG_SECRET_KEY, type KubeconfigSecretRef } from '../../exports/bind-api';

export type KubeconfigCheck =
  | {
      readonly ok: true;
      /** The kubeconfig YAML. */
      readonly kubeconfig: string;
      readonly server: string;
      /** The consumer's cluster namespace on the provider (the context's namespace). */
      readonly namespace: string;
    }
  | { readonly ok: false; readonly reason: string; readonly message: string };

/** Checks `secret` (undefined: not found; 'forbidden': the konnector may not read it) against the binding's reference. */
export function checkKubeconfigSecret(ref: KubeconfigSecretRef, secret: V1Secret | undefined | 'forbidden'): KubeconfigCheck {
  const where = `Secret ${ref.namespace}/${ref.name}`;
  if (secret === 'forbidden')
    return {
      ok: false,
      reason: 'SecretForbidden',
      message: `the konnector may not read ${where}: keep kubeconfig Secrets in the namespace the konnector is allowed to read (klutch-bind by default, see KonnectorProps.kubeconfigNamespaces)`,
    };
  if (!secret)
    return {
      ok: false,
      reason: 'SecretNotFound',
      message: `${where} (spec.kubeconfigSecretRef) does not exist; run kubectl bind again or create it`,
    };
  const raw = secret.data?.[ref.key ?? KUBECONFIG_SECRET_KEY];
  if (!raw)
    return {
      ok: false,
      reason: 'KubeconfigMissing',
      message: `${where} has no key "${ref.key}"; store the provider's kubeconfig under that key`,
    };
  const text = Buffer.from(raw, 'base64').toString('utf8');
  const kc = new KubeConfig();
  try {
    kc.loadFromString(text);
  } catch (e) {
    return { ok: false, reason: 'KubeconfigInvalid', message: `${where} key "${ref.key}" is not a kubeconfig: ${(e as Error).message}` };
  }
  const context = kc.getContextObject(kc.getCurrentContext());
  const server = kc.getCurrentCluster()?.server;
  if (!context || !server)
    return {
      ok: false,
      reason: 'KubeconfigInvalid',
      message: `${where}: the kubeconfig's current-context names no context with a cluster server`,
    };
  if (!/^https:\/\//.test(server))
    return { ok: false, reason: 'KubeconfigInvalid', message: `${where}: the kubeconfig's server "${server}" is not https` };
  if (!context.namespace)
    return {
      ok: false,
      reason: 'KubeconfigInvalid',
      message: `${where}: the kubeconfig's current context has no namespace; it must name the cluster namespace the provider created for this app cluster`,
    };
  if (!kc.getCurrentUser())
    return { ok: false, reason: 'KubeconfigInvalid', message: `${where}: the kubeconfig's current context names no user with credentials` };
  return { ok: true, kubeconfig: text, server, namespace: context.namespace };
}
