/**
 * One provider connection per distinct kubeconfig, shared by every binding whose Secret points at the same provider
 * (server) and cluster namespace — kubectl bind stores one kubeconfig per provider and binds each API through it.
 *
 * Rotation: when a binding's kubeconfig changes but still names the same server and namespace (a new token, the
 * provider's Secret copied down by the heartbeat), the connection's KubeConfig is reloaded in place. Every request
 * reads the current credentials, running watches keep running, and a watch that breaks resumes from its last
 * resourceVersion with the new token: nothing is re-listed and no event is lost. A different server or namespace is a
 * different provider and gets a connection of its own; the old one stops when no binding uses it.
 */
import { KubeConfig } from '@kubernetes/client-node';
import type { ProviderKubeconfig } from '../../exports/bind-api';

/** What the registry needs of a connection. */
export interface Connection {
  readonly key: string;
  /** Reloads the credentials in place. */
  rotate(source: ConnectionSource): void;
  stop(): Promise<void>;
}

/**
 * A provider's kubeconfig reduced to server, CA, TLS server name, namespace and token (`reduceProviderKubeconfig`):
 * the only thing a connection is built from.
 */
export type ConnectionSource = ProviderKubeconfig;

/** The identity of a provider connection: credentials are not part of it, so they can rotate. */
const connectionKey = (s: Pick<ConnectionSource, 'server' | 'namespace'>): string => `${s.server}#${s.namespace}`;

export class Connections<C extends Connection> {
  private readonly byKey = new Map<string, { conn: C; kubeconfig: string; users: Set<string> }>();
  private readonly byUser = new Map<string, string>();

  constructor(private readonly create: (key: string, source: ConnectionSource) => C) {}

  /**
   * The connection for `user` (a binding key) from `source`: an existing one for the same provider, rotated when the
   * kubeconfig changed, or a new one. A user that moved to another provider leaves its old connection.
   */
  async acquire(user: string, source: ConnectionSource): Promise<C> {
    const key = connectionKey(source);
    const previous = this.byUser.get(user);
    if (previous !== undefined && previous !== key) await this.release(user);
    let entry = this.byKey.get(key);
    if (!entry) {
      entry = { conn: this.create(key, source), kubeconfig: source.yaml, users: new Set() };
      this.byKey.set(key, entry);
    } else if (entry.kubeconfig !== source.yaml) {
      entry.conn.rotate(source);
      entry.kubeconfig = source.yaml;
    }
    entry.users.add(user);
    this.byUser.set(user, key);
    return entry.conn;
  }

  /** The connection `user` holds, if any. */
  of(user: string): C | undefined {
    const key = this.byUser.get(user);
    return key === undefined ? undefined : this.byKey.get(key)?.conn;
  }

  /** Drops `user`; the connection stops when it was the last. */
  async release(user: string): Promise<void> {
    const key = this.byUser.get(user);
    if (key === undefined) return;
    this.byUser.delete(user);
    const entry = this.byKey.get(key);
    if (!entry) return;
    entry.users.delete(user);
    if (entry.users.size === 0) {
      this.byKey.delete(key);
      await entry.conn.stop();
    }
  }

  get size(): number {
    return this.byKey.size;
  }

  async stopAll(): Promise<void> {
    const all = [...this.byKey.values()];
    this.byKey.clear();
    this.byUser.clear();
    await Promise.all(all.map((e) => e.conn.stop()));
  }
}

/**
 * A KubeConfig of exactly the reduced fields — never the provider's text, so nothing it might have carried (exec,
 * auth-provider, files, proxies, TLS off) can reach the client. `into` reloads an existing one in place (same object,
 * so clients and watches follow).
 */
export function kubeConfigOf(p: ConnectionSource, into = new KubeConfig()): KubeConfig {
  into.loadFromOptions({
    clusters: [
      {
        name: 'provider',
        server: p.server,
        skipTLSVerify: false,
        ...(p.ca ? { caData: Buffer.from(p.ca).toString('base64') } : {}),
        ...(p.serverName ? { tlsServerName: p.serverName } : {}),
      },
    ],
    users: [{ name: 'provider', token: p.token }],
    contexts: [{ name: 'provider', cluster: 'provider', user: 'provider', namespace: p.namespace }],
    currentContext: 'provider',
  });
  return into;
}
