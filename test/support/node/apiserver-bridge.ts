/**
 * How the node reaches its API server. The harness's API servers listen on the host's 127.0.0.1, which no other
 * network namespace can reach; a unix socket can (it is a file). So: in the host namespace the test process listens
 * on `<run>/apiserver.sock` and connects each stream to 127.0.0.1:<port>; inside the node's namespace a small
 * forwarder (a node process) listens on the node's address at the same port and connects each stream to that
 * socket. TLS passes through untouched: the kubelet, kube-proxy, CoreDNS and every Pod talk to the real API server.
 * The `kubernetes` Service's endpoint is that address, so in-cluster clients reach it at its ClusterIP.
 */
import { rmSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { launch, type Proc, tail, waitReady } from '../processes';
import type { NodeCgroup } from './cgroups';
import { inNode } from './netns';

/** The forwarder inside the node: listen on host:port, pipe each connection to the unix socket; end with its parent. */
const FORWARDER = `
const net = require('node:net');
const [host, port, socket] = process.argv.slice(1);
const parent = process.ppid;
const pipe = (a, b) => { a.pipe(b); b.pipe(a); a.on('error', () => b.destroy()); b.on('error', () => a.destroy()); };
net.createServer((c) => pipe(c, net.connect(socket))).listen(Number(port), host, () => console.log('forwarding ' + host + ':' + port + ' to ' + socket));
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
  close(): Promise<void>;
}

/** Opens the bridge from `<nodeIp>:<port>` inside the node to `127.0.0.1:<port>` on the host. */
export async function bridgeApiServer(
  runDir: string,
  apiPort: number,
  nodeIp: string,
  cg: NodeCgroup,
  holderPid: number,
  track: (p: Proc) => void,
): Promise<ApiServerBridge> {
  const socket = join(runDir, 'apiserver.sock');
  rmSync(socket, { force: true });
  const open = new Set<Socket>();
  const host: Server = createServer((c) => {
    const upstream = createConnection({ host: '127.0.0.1', port: apiPort });
    for (const s of [c, upstream]) {
      open.add(s);
      s.once('close', () => open.delete(s));
    }
    pipe(c, upstream);
  });
  await new Promise<void>((resolve, reject) => host.once('error', reject).listen(socket, resolve));
  const forwarder = launch({
    ...inNode(cg, holderPid, process.execPath, ['-e', FORWARDER, nodeIp, String(apiPort), socket]),
    role: 'apiserver-forwarder',
    owner: 'node',
    logDir: runDir,
  });
  track(forwarder);
  await waitReady(forwarder, async () => tail(forwarder.logPath).includes('forwarding'), 30_000);
  return {
    server: `https://${nodeIp}:${apiPort}`,
    forwarder,
    close: async () => {
      await forwarder.stop(2_000);
      // Watches stay open for minutes: end them, or close() waits for them.
      for (const s of open) s.destroy();
      await new Promise<void>((r) => host.close(() => r()));
      rmSync(socket, { force: true });
    },
  };
}
