/**
 * The provider kubeconfig in the app cluster: Secret `kubeconfig-<random>` (generateName, as Klutch's CLI) in the
 * konnector's namespace, key `kubeconfig`. One Secret per provider server and cluster namespace: binding a second API
 * of the same provider, or the same one again, writes the new kubeconfig into the Secret already there, so every
 * binding through that provider shares it (and the konnector one connection).
 */
import type { V1Secret } from '@kubernetes/client-node';
import { KUBECONFIG_SECRET_KEY, reduceProviderKubeconfig } from '../exports/bind-api';
import { type Cluster } from './kube';
import { isConflict } from '../lib/kube-errors';

const KUBECONFIG_SECRET_PREFIX = 'kubeconfig-';

/**
 * Server and context namespace of a provider kubeconfig, or undefined when it is none — or one that is not only
 * server, CA and token (reduceProviderKubeconfig): such a Secret is never reused, a new one is written beside it.
 */
function providerOf(kubeconfig: string): { server: string; namespace: string } | undefined {
  const r = reduceProviderKubeconfig(kubeconfig, 'a kubeconfig Secret');
  return r.ok ? { server: r.server, namespace: r.namespace } : undefined;
}

/** Among `secrets`, the kubeconfig Secret (`kubeconfig-*`) for the provider server and namespace of `kubeconfig`. */
export function secretOfProvider(secrets: readonly V1Secret[], kubeconfig: string): V1Secret | undefined {
  const want = providerOf(kubeconfig);
  if (!want) return undefined;
  return secrets.find((s) => {
    if (!s.metadata?.name?.startsWith(KUBECONFIG_SECRET_PREFIX)) return false;
    const raw = s.data?.[KUBECONFIG_SECRET_KEY];
    const have = raw ? providerOf(Buffer.from(raw, 'base64').toString('utf8')) : undefined;
    return have?.server === want.server && have.namespace === want.namespace;
  });
}

/** The kubeconfig Secret for this provider server and namespace, if one exists. */
export async function findKubeconfigSecret(app: Cluster, namespace: string, kubeconfig: string): Promise<V1Secret | undefined> {
  return secretOfProvider((await app.core.listNamespacedSecret({ namespace })).items, kubeconfig);
}

/** A new kubeconfig Secret, as Klutch's CLI creates it: `generateName: kubeconfig-`, the kubeconfig under `kubeconfig`. */
export function kubeconfigSecret(namespace: string, kubeconfig: string): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { generateName: KUBECONFIG_SECRET_PREFIX, namespace },
    type: 'Opaque',
    data: { [KUBECONFIG_SECRET_KEY]: Buffer.from(kubeconfig).toString('base64') },
  };
}

/** Stores `kubeconfig`: into the existing Secret for its provider, else a new one. */
export async function storeKubeconfig(
  app: Cluster,
  namespace: string,
  kubeconfig: string,
): Promise<{ readonly name: string; readonly reused: boolean }> {
  const body = kubeconfigSecret(namespace, kubeconfig);
  // The konnector rewrites this Secret on each heartbeat (token rotation): a replace that lost that race reads again.
  for (let attempt = 1; ; attempt++) {
    const existing = await findKubeconfigSecret(app, namespace, kubeconfig);
    if (!existing) break;
    try {
      await app.core.replaceNamespacedSecret({ namespace, name: existing.metadata!.name!, body: { ...existing, data: body.data } });
      return { name: existing.metadata!.name!, reused: true };
    } catch (e) {
      if (!isConflict(e) || attempt >= 5) throw e;
    }
  }
  const created = await app.core.createNamespacedSecret({ namespace, body });
  return { name: created.metadata!.name!, reused: false };
}
