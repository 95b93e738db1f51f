/**
 * Every provider kubeconfig kubectl bind uses or stores — from a BindingResponse, `--remote-kubeconfig`, or a
 * `kubeconfig-*` Secret — goes through here: reduced to server, CA, server name, namespace and token
 * (reduceProviderKubeconfig), or refused naming the field. A kubeconfig is the provider's data: `exec`,
 * `auth-provider`, local files, `insecure-skip-tls-verify` or `proxy-url` would let a bind URL run programs on this
 * workstation (and in the konnector) or read its files.
 */
import { parse, stringify } from 'yaml';
import { reduceProviderKubeconfig, type ProviderKubeconfig } from '../exports/bind-api';
import { CliError } from './errors';

/**
 * The reduced kubeconfig of `text` (its `yaml` is the canonical form to store); `where` names its source in errors.
 * `namespace` (--remote-namespace) replaces the current context's namespace.
 */
export function providerKubeconfig(text: string, where: string, namespace?: string): ProviderKubeconfig {
  const r = reduceProviderKubeconfig(namespace ? withNamespace(text, namespace) : text, where);
  if (r.ok) return r;
  throw new CliError(
    r.message,
    r.reason === 'KubeconfigUnsafe'
      ? 'nothing was stored or run; bind only to a provider you trust, and tell its operator'
      : 'use the kubeconfig the bind backend handed out: an https server, the cluster namespace and a token',
  );
}

function withNamespace(text: string, namespace: string): string {
  let doc: Record<string, unknown>;
  try {
    doc = parse(text) as Record<string, unknown>;
  } catch {
    return text; // reduceProviderKubeconfig says what is wrong
  }
  const contexts = Array.isArray(doc?.contexts) ? (doc.contexts as { name?: unknown; context?: Record<string, unknown> }[]) : [];
  const current = contexts.find((c) => c?.name === doc['current-context']);
  if (current?.context && typeof current.context === 'object') current.context.namespace = namespace;
  return stringify(doc);
}
