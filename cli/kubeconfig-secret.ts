/**
 * The provider kubeconfig in the app cluster: Secret `kubeconfig-<random>` (generateName, as Klutch's CLI) in the
 * konnector's namespace, key `kubeconfig`. One Secret per provider server and cluster namespace: binding a second API
 * of the same provider, or the same one again, writes the new kubeconfig into the Secret already there, so every
 * binding through that provider shares it (and the konnector one connection).
 */
import { KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { KUBECONFIG_SECRET_KEY } from '../exports/bind-api';
import type { Cluster } from './kube';

export const KUBECONFIG_SECRET_PREFIX = 'kubeconfig-';

/** Server and context namespace of a kubeconfig, or undefined when it is none. */
export function providerOf(kubeconfig: string): { server: string; namespace: string } | undefined {
  try {
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfig);
    const server = kc.getCurrentCluster()?.server;
    const namespace = kc.getContextObject(kc.getCurrentContext())?.namespace;
    return server && namespace ? { server, namespace } : undefined;
  } catch {
    return undefined;
  }
}

/** The kubeconfig Secret for this provider server and namespace, if one exists. */
export async function findKubeconfigSecret(app: Cluster, namespace: string, kubeconfig: string): Promise<V1Secret | undefined> {
  const want = providerOf(kubeconfig);
  const list = await app.core.listNamespacedSecret({ namespace });
  return list.items.find((s) => {
    if (!s.metadata?.name?.startsWith(KUBECONFIG_SECRET_PREFIX)) return false;
    const raw = s.data?.[KUBECONFIG_SECRET_KEY];
    const have = raw ? providerOf(Buffer.from(raw, 'base64').toString('utf8')) : undefined;
    return have?.server === want?.server && have?.namespace === want?.namespace;
  });
}

/** Stores `kubeconfig`: into the existing Secret for its provider, else a new one. */
export async function storeKubeconfig(
  app: Cluster,
  namespace: string,
  kubeconfig: string,
): Promise<{ readonly name: string; readonly reused: boolean }> {
  const data = { [KUBECONFIG_SECRET_KEY]: Buffer.from(kubeconfig).toString('base64') };
  const existing = await findKubeconfigSecret(app, namespace, kubeconfig);
  if (existing) {
    await app.core.replaceNamespacedSecret({ namespace, name: existing.metadata!.name!, body: { ...existing, data } });
    return { name: existing.metadata!.name!, reused: true };
  }
  const created = await app.core.createNamespacedSecret({
    namespace,
    body: { apiVersion: 'v1', kind: 'Secret', metadata: { generateName: KUBECONFIG_SECRET_PREFIX, namespace }, type: 'Opaque', data },
  });
  return { name: created.metadata!.name!, reused: false };
}
