/**
 * The consumer's kubeconfig and its token. Klutch hands out a legacy ServiceAccount token Secret that never expires.
 * Here the token comes from the TokenRequest API, for ServiceAccount `klutch-binder`, bound to the provider-side
 * kubeconfig Secret: deleting that Secret (or the cluster namespace, or the ServiceAccount) revokes it at once. It
 * lives `lifetime` and is replaced `refreshBefore` its expiry by writing a new kubeconfig into the same Secret, which
 * the konnector copies to the app cluster on every change.
 */
import { createHash } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import { KUBECONFIG_SECRET_KEY, providerKubeconfigYaml } from '../../exports/bind-api';
import { type BackendClients, isConflict, isNotFound } from '../kube';
import { BackendAnnotations, Labels, MANAGED_BY } from '../labels';
import { BINDER } from './rbac';

/** The provider-side Secret the ClusterBinding names. */
export const KUBECONFIG_SECRET = 'kubeconfig';

export interface KubeconfigTarget {
  /** The provider API server as consumers reach it (https). */
  readonly server: string;
  /** PEM CA of that server, inlined. */
  readonly ca: string;
  readonly serverName?: string;
}

export interface TokenPolicy {
  readonly lifetimeMs: number;
  readonly refreshBeforeMs: number;
}

/** The kubeconfig as Klutch writes it: cluster, context and user all `default`, the context in the cluster namespace. */
function kubeconfigYaml(t: KubeconfigTarget, namespace: string, token: string): string {
  return providerKubeconfigYaml(t, namespace, token);
}

/** What a kubeconfig was written for; a change (new address or CA) means a new kubeconfig. */
export function writtenFor(t: KubeconfigTarget, namespace: string): string {
  return createHash('sha256')
    .update(JSON.stringify([t.server, t.ca, t.serverName ?? '', namespace]))
    .digest('hex')
    .slice(0, 16);
}

/** When the Secret's token must be replaced (ms since the epoch), or 0 when it has none or one for another target. */
export function refreshAt(secret: V1Secret | undefined, t: KubeconfigTarget, namespace: string, policy: TokenPolicy): number {
  const a = secret?.metadata?.annotations ?? {};
  if (!secret?.data?.[KUBECONFIG_SECRET_KEY] || a[BackendAnnotations.kubeconfigFor] !== writtenFor(t, namespace)) return 0;
  const expires = Date.parse(a[BackendAnnotations.tokenExpires] ?? '');
  return Number.isNaN(expires) ? 0 : expires - policy.refreshBeforeMs;
}

export interface Kubeconfig {
  readonly yaml: string;
  /** When the next token must be written. */
  readonly refreshAt: number;
  /** Whether this call wrote a new token (rather than finding a current one). */
  readonly written: boolean;
  /** The Secret's uid (what a BindingResponse's own token is bound to). */
  readonly secretUid: string;
}

/**
 * The kubeconfig in the cluster namespace's Secret, written anew when it is missing, due for refresh, or written for
 * another target. Concurrent callers (two binds, or a bind and the rotation) converge on one Secret: the write is
 * conditional on the version read, and a loser takes the winner's kubeconfig. With `absent` (a cluster namespace this
 * bind just created) the Secret is created without reading it first; should it exist after all, the create conflicts
 * and it is read as usual.
 */
export async function ensureKubeconfig(
  c: BackendClients,
  namespace: string,
  t: KubeconfigTarget,
  policy: TokenPolicy,
  o?: { absent?: boolean },
): Promise<Kubeconfig>;
/** With `create: false` (the rotation), a missing Secret stays missing and the result is undefined. */
export async function ensureKubeconfig(
  c: BackendClients,
  namespace: string,
  t: KubeconfigTarget,
  policy: TokenPolicy,
  o: { create: false },
): Promise<Kubeconfig | undefined>;
export async function ensureKubeconfig(
  c: BackendClients,
  namespace: string,
  t: KubeconfigTarget,
  policy: TokenPolicy,
  o: { create?: boolean; absent?: boolean } = {},
): Promise<Kubeconfig | undefined> {
  for (let attempt = 0; ; attempt++) {
    let secret =
      attempt === 0 && o.absent && o.create !== false
        ? undefined
        : await c.core.readNamespacedSecret({ name: KUBECONFIG_SECRET, namespace }).catch((e: unknown) => {
            if (isNotFound(e)) return undefined;
            throw e;
          });
    if (!secret && o.create === false) return undefined;
    const due = refreshAt(secret, t, namespace, policy);
    if (secret && due > Date.now()) {
      return {
        yaml: Buffer.from(secret.data![KUBECONFIG_SECRET_KEY]!, 'base64').toString(),
        refreshAt: due,
        written: false,
        secretUid: secret.metadata!.uid!,
      };
    }
    try {
      // The Secret must exist before a token can be bound to it.
      secret ??= await c.core.createNamespacedSecret({
        namespace,
        body: {
          metadata: { name: KUBECONFIG_SECRET, namespace, labels: { [Labels.kubeconfig]: 'true', [Labels.managedBy]: MANAGED_BY } },
          type: 'Opaque',
        },
      });
      const tr = await binderToken(c, namespace, secret.metadata!.uid!, Math.round(policy.lifetimeMs / 1000));
      const yaml = kubeconfigYaml(t, namespace, tr.token);
      const expires = new Date(tr.expirationTimestamp).toISOString();
      await c.core.replaceNamespacedSecret({
        name: KUBECONFIG_SECRET,
        namespace,
        body: {
          ...secret,
          metadata: {
            ...secret.metadata,
            labels: { ...secret.metadata?.labels, [Labels.kubeconfig]: 'true', [Labels.managedBy]: MANAGED_BY },
            annotations: {
              ...secret.metadata?.annotations,
              [BackendAnnotations.tokenExpires]: expires,
              [BackendAnnotations.tokenIssued]: new Date().toISOString(),
              [BackendAnnotations.kubeconfigFor]: writtenFor(t, namespace),
            },
          },
          data: { ...secret.data, [KUBECONFIG_SECRET_KEY]: Buffer.from(yaml).toString('base64') },
        },
      });
      return { yaml, refreshAt: Date.parse(expires) - policy.refreshBeforeMs, written: true, secretUid: secret.metadata!.uid! };
    } catch (e) {
      // Someone else created or rewrote the Secret meanwhile: read it again and use theirs.
      if (!isConflict(e) || attempt >= 5) throw e;
    }
  }
}

/** The lifetime of the token in a BindingResponse: the shortest Kubernetes issues. */
const BINDING_TOKEN_SECONDS = 600;

/**
 * The kubeconfig for a BindingResponse: it travels in a URL (browser history, logs), so it carries a token of its own
 * that lives ten minutes, bound to the kubeconfig Secret (uid `secretUid`, as ensureKubeconfig returned it) like the
 * others. The konnector replaces it at once with the Secret's (its heartbeat copies the provider-side Secret when it
 * starts).
 */
export async function bindingKubeconfig(c: BackendClients, namespace: string, t: KubeconfigTarget, secretUid: string): Promise<string> {
  const tr = await binderToken(c, namespace, secretUid, BINDING_TOKEN_SECONDS);
  return kubeconfigYaml(t, namespace, tr.token);
}

/** A TokenRequest token of `klutch-binder` bound to the `kubeconfig` Secret: deleting the Secret revokes it. */
/** A token of the binder bound to the kubeconfig Secret; the API server always answers with both fields. */
async function binderToken(
  c: BackendClients,
  namespace: string,
  secretUid: string,
  seconds: number,
): Promise<{ token: string; expirationTimestamp: Date }> {
  const tr = await c.core.createNamespacedServiceAccountToken({
    name: BINDER,
    namespace,
    body: {
      spec: {
        audiences: [],
        expirationSeconds: seconds,
        boundObjectRef: { apiVersion: 'v1', kind: 'Secret', name: KUBECONFIG_SECRET, uid: secretUid },
      },
    },
  });
  const { token, expirationTimestamp } = tr.status ?? {};
  if (!token || !expirationTimestamp)
    throw new Error(`the TokenRequest for ServiceAccount ${namespace}/${BINDER} was answered without a token and its expiry`);
  return { token, expirationTimestamp };
}
