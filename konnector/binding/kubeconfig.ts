/**
 * The `SecretValid` check of an APIServiceBinding: its kubeconfig Secret exists, holds a `kubeconfig` key, and that
 * kubeconfig is one a provider may hand out — reduced by `reduceProviderKubeconfig` to server, CA, TLS server name,
 * namespace (the consumer's cluster namespace on the provider) and bearer token. Anything that would run a program,
 * read a local file, turn TLS off or go through a proxy is refused by name (`KubeconfigUnsafe`): the kubeconfig came
 * from the other side of a trust boundary. The connection is built from the reduced result only, never from the text.
 * Every failure names the Secret, the field and the fix.
 */
import type { V1Secret } from '@kubernetes/client-node';
import type { BindingHoldReason } from '../../lib/binding-reasons';
import { KUBECONFIG_SECRET_KEY, reduceProviderKubeconfig, type KubeconfigSecretRef, type ProviderKubeconfig } from '../../exports/bind-api';

export type KubeconfigCheck =
  | ({ readonly ok: true } & ProviderKubeconfig)
  | { readonly ok: false; readonly reason: BindingHoldReason; readonly message: string; readonly field?: string };

/** Checks `secret` (undefined: not found; 'forbidden': the konnector may not read it) against the binding's reference. */
export function checkKubeconfigSecret(ref: KubeconfigSecretRef, secret: V1Secret | undefined | 'forbidden'): KubeconfigCheck {
  const where = `Secret ${ref.namespace}/${ref.name}`;
  const key = ref.key ?? KUBECONFIG_SECRET_KEY;
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
  const raw = secret.data?.[key];
  if (!raw)
    return {
      ok: false,
      reason: 'KubeconfigMissing',
      message: `${where} has no key "${key}"; store the provider's kubeconfig under that key`,
    };
  const r = reduceProviderKubeconfig(Buffer.from(raw, 'base64').toString('utf8'), `${where} key "${key}"`);
  if (!r.ok) return { ok: false, reason: r.reason, message: r.message, ...(r.field ? { field: r.field } : {}) };
  return r;
}
