/**
 * Token rotation: each provider-side kubeconfig Secret of this backend's cluster namespaces gets a new TokenRequest token `--token-refresh-before` its
 * token's expiry, written into the same Secret (the konnector copies it to the app cluster on every change). A
 * deleted Secret is not made again here: that is an unbind, and its token died with it.
 *
 * The cached Secret decides whether anything is due, so the events of a bind's own writes cost the API server nothing:
 * only a Secret whose token is due (or missing, or written for another target) is read live and rewritten. A Secret
 * still empty moments after it was made is a bind in the middle of writing it: rotating it too would only race the
 * bind for the same write, so it is looked at again once the bind had time to finish.
 */
import type { V1Secret } from '@kubernetes/client-node';
import type { ObjectRef, ReconcileContext, ReconcileResult } from '../../controller';
import { KUBECONFIG_SECRET_KEY } from '../../exports/bind-api';
import { refreshAt, type Kubeconfig, type KubeconfigTarget, type TokenPolicy } from '../provision/kubeconfig';

/** How long a bind may take between making the Secret and writing its token. */
export const BIND_WRITE_GRACE_MS = 10_000;

export interface KubeconfigRotationDeps {
  readonly target: KubeconfigTarget;
  readonly tokens: TokenPolicy;
  /**
   * Whether a cluster namespace is this backend's (`--namespace-prefix`): another backend with another prefix on the
   * same cluster rotates its own consumers' tokens, for its own address and CA.
   */
  ours(namespace: string): boolean;
  /** The kubeconfig Secret from the cache. */
  getSecret(ref: ObjectRef): V1Secret | undefined;
  /** Writes a new token into the Secret unless a live read finds it current (ensureKubeconfig, never creating one). */
  rotate(namespace: string): Promise<Kubeconfig | undefined>;
  /** @default Date.now */
  now?(): number;
}

export async function reconcileKubeconfig(
  d: KubeconfigRotationDeps,
  ref: ObjectRef,
  ctx: Pick<ReconcileContext, 'log'>,
): Promise<ReconcileResult> {
  const namespace = ref.namespace;
  if (!namespace || !d.ours(namespace)) return;
  const secret = d.getSecret(ref);
  if (!secret || secret.metadata?.deletionTimestamp) return;
  const now = d.now?.() ?? Date.now();
  const due = refreshAt(secret, d.target, namespace, d.tokens);
  if (due > now) return { requeueAfterMs: Math.max(1000, due - now) };
  const age = now - Date.parse((secret.metadata?.creationTimestamp as unknown as string | undefined) ?? '');
  if (!secret.data?.[KUBECONFIG_SECRET_KEY] && age >= 0 && age < BIND_WRITE_GRACE_MS) return { requeueAfterMs: BIND_WRITE_GRACE_MS - age };
  const k = await d.rotate(namespace);
  if (!k) return;
  // Operators audit token issue: say when a new one went out and when the next is due.
  if (k.written)
    ctx.log.info({ namespace, nextRotation: new Date(k.refreshAt).toISOString() }, 'wrote a new token into the kubeconfig Secret');
  return { requeueAfterMs: Math.max(1000, k.refreshAt - (d.now?.() ?? Date.now())) };
}
