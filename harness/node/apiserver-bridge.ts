/**
 * How the node reaches its API server. The harness's API servers listen on the host's 127.0.0.1, which no other
 * network namespace can reach; a unix socket can (it is a file). So: in the host namespace the test process listens
 * on `<run>/apiserver.sock` and connects each stream to 127.0.0.1:<port>; inside the node's namespace a small
 * forwarder (a node process) listens on the node's address at the same port and connects each stream to that
 * socket. TLS passes through untouched: the kubelet, kube-proxy, CoreDNS and every Pod talk to the real API server.
 * The `kubernetes` Service's endpoint is that address, so in-cluster clients reach it at its ClusterIP.
 *
 * The other way, API server -> node (kubelet logs and exec, Pod and Service proxies, webhooks served by Pods), is the
 * API server's "cluster" egress (startControlPlanes with `pods`): HTTP CONNECT over a unix socket, which the same
 * forwarder serves by connecting to the named address from inside the namespace. From there only the node's own
 * addresses are reachable: the namespace has no route out. The test process takes the same way to a server the run
 * put inside the node (the registry): `forwardIntoNode` listens on the host's 127.0.0.1 and CONNECTs each stream.
 */
import { rmSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { launch, type Proc, tail, waitReady } from '../cluster/processes';
import type { NodeCgroup } from './cgroups';
import { inNode } from './netns';

/**
 * The forwarder inside the node: listen on host:port, pipe each connection to the API server's unix socket (or, for
 * exposeHostPort, another host port's); with a connect socket (the API server's egress socket, or one of the run for
 * the test process) serve HTTP CONNECT there; end with its parent.
 */
const FORWARDER = `
const net = require('node:net');
const fs = require('node:fs');
const [host, port, socket, egress] = process.argv.slice(1);
const parent = process.ppid;
const pipe = (a, b) => { a.pipe(b); b.pipe(a); a.on('error', () => b.destroy()); b.on('error', () => a.destroy()); };
net.createServer((c) => pipe(c, net.connect(socket))).listen(Number(port), host, () => console.log('forwarding ' + host + ':' + port + ' to ' + socket));
if (egress) {
  fs.rmSync(egress, { force: true });
  net.createServer((c) => {
    let head = Buffer.alloc(0);
    c.on('error', () => c.destroy());
    const onData = (d) => {
      head = Buffer.concat([head, d]);
      const end = head.indexOf('\\r\\n\\r\\n');
      if (end < 0) { if (head.length > 16384) c.destroy(); return; }
      c.off('data', onData);
      const m = /^CONNECT \\[?([^\\s\\]]+)\\]?:(\\d+) HTTP\\/1\\.[01]\\r\\n/.exec(head.subarray(0, end).toString());
      if (!m) { c.end('HTTP/1.1 405 Method Not Allowed\\r\\n\\r\\n'); return; }
      const u = net.connect(Number(m[2]), m[1]);
      u.once('error', (e) => { console.log('egress to ' + m[1] + ':' + m[2] + ' failed: ' + e.message); c.end('HTTP/1.1 502 Bad Gateway\\r\\n\\r\\n'); });
      u.once('connect', () => {
        c.write('HTTP/1.1 200 Connection established\\r\\n\\r\\n');
        if (head.length > end + 4) u.write(head.subarray(end + 4));
        pipe(c, u);
      });
    };
    c.on('data', onData);
  }).listen(egress, () => console.log('serving egress on ' + egress));
}
setInterval(() => { if (process.ppid !== parent) process.exit(3); }, 250).unref();
`;

function pipe(a: Socket, b: Socket): void {
  a.pipe(b);
  b.pipe(a);
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
}

export interface ApiServerBridge {
  /** `https://<node ip>:<port>` as seen inside the node. */
  readonly server: string;
  readonly forwarder: Proc;
  /** The unix socket serving HTTP CONNECT to addresses inside the node (forwardIntoNode). */
  readonly connectSocket: string;
  close(): Promise<void>;
}

/**
 * Opens the bridge from `<nodeIp>:<port>` inside the node to `127.0.0.1:<port>` on the host, and the way into the
 * node: HTTP CONNECT on `egressSocket` (the API server's) or, without it, on `<run>/node-connect.sock`.
 */
export async function bridgeApiServer(
  runDir: string,
  apiPort: number,
  nodeIp: string,
  cg: NodeCgroup,
  holderPid: number,
  track: (p: Proc) => void,
  egressSocket?: string,
): Promise<ApiServerBridge> {
  const socket = join(runDir, 'apiserver.sock');
  const host = await serveLoopbackPort(socket, apiPort);
  const connectSocket = egressSocket ?? join(runDir, 'node-connect.sock');
  const forwarder = launch({
    ...inNode(cg, holderPid, process.execPath, ['-e', FORWARDER, nodeIp, String(apiPort), socket, connectSocket]),
    role: 'apiserver-forwarder',
    owner: 'node',
    logDir: runDir,
  });
  track(forwarder);
  await waitReady(
    forwarder,
    async () => tail(forwarder.logPath).includes('forwarding') && tail(forwarder.logPath).includes('serving egress'),
    30_000,
  );
  return {
    server: `https://${nodeIp}:${apiPort}`,
    forwarder,
    connectSocket,
    close: async () => {
      await forwarder.stop(2_000);
      await host.close();
      rmSync(connectSocket, { force: true });
    },
  };
}

/**
 * The host half of a bridge into a node: a unix socket (a file, which every namespace reaches) whose every stream
 * goes to 127.0.0.1:`port`. `close()` ends the open streams too (watches stay open for minutes) and removes the socket.
 */
export async function serveLoopbackPort(socket: string, port: number): Promise<{ close(): Promise<void> }> {
  rmSync(socket, { force: true });
  const open = new Set<Socket>();
  const server: Server = createServer((c) => {
    const upstream = createConnection({ host: '127.0.0.1', port });
    for (const s of [c, upstream]) {
      open.add(s);
      s.once('close', () => open.delete(s));
    }
    pipe(c, upstream);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(socket, resolve));
  return {
    close: async () => {
      for (const s of open) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      rmSync(socket, { force: true });
    },
  };
}

/**
 * The node half for another host port (exposeHostPort): the forwarder's arguments for a listener at
 * `<address>:<listen>` inside the node piping to `socket`, without a connect socket.
 */
export function forwarderArgs(address: string, listen: number, socket: string): string[] {
  return ['-e', FORWARDER, address, String(listen), socket];
}

export interface NodePort {
  /** The port on the host's 127.0.0.1 that reaches the address inside the node. */
  readonly port: number;
  readonly proc: Proc;
  close(): Promise<void>;
}

/**
 * The host end of `forwardIntoNode`: listen on 127.0.0.1 (a free port), CONNECT each stream over the connect socket,
 * then pipe; end with its parent. A process of its own, so a test blocked in a synchronous call (buildah, crank) still
 * has its streams forwarded.
 */
const INTO_NODE = `
const net = require('node:net');
const [socket, host, port] = process.argv.slice(1);
const parent = process.ppid;
const server = net.createServer((c) => {
  c.pause();
  const u = net.connect(socket);
  u.on('error', () => c.destroy());
  c.on('error', () => u.destroy());
  u.write('CONNECT ' + host + ':' + port + ' HTTP/1.1\\r\\nHost: ' + host + ':' + port + '\\r\\n\\r\\n');
  let head = Buffer.alloc(0);
  const onData = (d) => {
    head = Buffer.concat([head, d]);
    const end = head.indexOf('\\r\\n\\r\\n');
    if (end < 0) return;
    u.off('data', onData);
    if (!/^HTTP\\/1\\.[01] 200/.test(head.toString())) { console.log('CONNECT ' + host + ':' + port + ' refused: ' + head.toString().split('\\r\\n')[0]); c.destroy(); u.destroy(); return; }
    if (head.length > end + 4) c.write(head.subarray(end + 4));
    c.pipe(u); u.pipe(c);
    c.resume();
  };
  u.on('data', onData);
});
server.listen(0, '127.0.0.1', () => console.log('listening on ' + server.address().port));
setInterval(() => { if (process.ppid !== parent) process.exit(3); }, 250).unref();
`;

/**
 * A port on the host's 127.0.0.1 connected to `host:port` inside the node, by HTTP CONNECT over the node's connect
 * socket: the test process reaches a server of the node (the registry) while no address of the node exists outside
 * its namespace.
 */
export async function forwardIntoNode(runDir: string, connectSocket: string, host: string, port: number): Promise<NodePort> {
  const proc = launch({
    command: process.execPath,
    args: ['-e', INTO_NODE, connectSocket, host, String(port)],
    role: `forward-${host}-${port}`,
    owner: 'node',
    logDir: runDir,
  });
  let local = 0;
  await waitReady(
    proc,
    async () => {
      local = Number(/listening on (\d+)/.exec(tail(proc.logPath))?.[1] ?? 0);
      return local > 0;
    },
    30_000,
  );
  return { port: local, proc, close: () => proc.stop(2_000) };
}
