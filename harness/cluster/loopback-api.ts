import type { RequestListener } from 'node:http';
import { createSecureServer } from 'node:http2';
import { createServer, type Server, type ServerOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import { KubeConfig, type User } from '@kubernetes/client-node';
import { type Ca, createCa } from './pki';

/**
 * An HTTPS server on loopback with a certificate of a CA of its own: the stand-in unit tests put where an API server
 * or a backend would answer, so that client-node's real request path (TLS, the kubeconfig's CA and user) is what they
 * exercise.
 */
export interface LoopbackApi {
  readonly server: Server;
  readonly url: string;
  readonly ca: Ca;
  /** TLS connections accepted so far: each one a handshake the real server would pay for. */
  readonly connections: number;
  /** A kubeconfig for this server, trusting `caPem` (the server's CA by default), as `user` (a bearer token `t`). */
  kubeConfig(user?: Omit<User, 'name'>, caPem?: string): KubeConfig;
  close(): Promise<void>;
}

/**
 * `tls`: more server options, e.g. `requestCert` and the `ca` of client certificates for mutual TLS. `http2`: offer
 * HTTP/2 first, as kube-apiserver does (HTTP/1.1 still answered); the handler gets Node's compatible request objects.
 */
export async function startLoopbackApi(
  caName: string,
  handler: RequestListener,
  tls: ServerOptions = {},
  o: { readonly http2?: boolean } = {},
): Promise<LoopbackApi> {
  const ca = await createCa(caName);
  const pair = await ca.issue({ commonName: '127.0.0.1', ips: ['127.0.0.1'] });
  const options = { ...tls, cert: pair.cert, key: pair.key };
  const server = (
    o.http2 ? createSecureServer({ ...options, allowHTTP1: true }, handler as never) : createServer(options, handler)
  ) as Server;
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (socket: import('node:net').Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  let connections = 0;
  server.on('secureConnection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    server,
    url,
    ca,
    get connections() {
      return connections;
    },
    kubeConfig: (user = { token: 't' }, caPem = ca.cert) => {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'c', server: url, caData: Buffer.from(caPem).toString('base64') }],
        users: [{ name: 'u', ...user }],
        contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
        currentContext: 'x',
      });
      return kc;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
