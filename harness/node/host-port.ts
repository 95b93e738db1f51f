/**
 * A port of the host's loopback made reachable inside a node's network namespace, at `<node address>:<port>`: the way
 * the node reaches its API server (apiserver-bridge.ts, whose two halves this reuses), for any server the run keeps on
 * the host — the OpenID provider the backend's Pods log users in with, or another cluster's API server that a
 * konnector Pod syncs with.
 */
import { join } from 'node:path';
import { tail, waitReady } from '../cluster/processes';
import { forwarderArgs, serveLoopbackPort } from './apiserver-bridge';
import type { Node } from './node';

export interface HostPort {
  /** `<node address>:<port>`, as Pods of the node reach it. */
  readonly address: string;
  close(): Promise<void>;
}

/** Makes 127.0.0.1:`port` of the host reachable at `<node.ip>:<listen ?? port>` inside the node. */
export async function exposeHostPort(node: Node, port: number, listen = port): Promise<HostPort> {
  const host = await serveLoopbackPort(join(node.runDir, `host-${port}.sock`), port);
  const proc = node.startProcess(
    `host-port-${port}`,
    process.execPath,
    forwarderArgs(node.ip, listen, join(node.runDir, `host-${port}.sock`)),
  );
  await waitReady(proc, async () => tail(proc.logPath).includes('forwarding'), 30_000);
  return {
    address: `${node.ip}:${listen}`,
    close: async () => {
      await proc.stop(2_000);
      await host.close();
    },
  };
}
