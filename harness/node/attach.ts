/**
 * A node started by another process of the run (the shared Pod platform's, in the cluster project's global setup),
 * used from a test worker: commands inside its namespaces, its Pods' logs, forwards into it. The node's processes stay
 * the starter's: `close()` ends only what this attachment started (its forwards).
 */
import { join } from 'node:path';
import { forwardIntoNode, type NodePort } from './apiserver-bridge';
import { importImages } from './images';
import { execInNode } from './netns';
import { type Node, type NodeHandle, podLogDir } from './node';

export type AttachedNode = Pick<
  Node,
  'name' | 'runDir' | 'ip' | 'dnsIp' | 'netns' | 'busyboxImage' | 'registryHostsDir' | 'podLogs' | 'exec' | 'importImage' | 'forward'
> & {
  readonly handle: NodeHandle;
  /** The kubelet's log, for messages. */
  readonly kubeletLog: string;
  /** Ends the forwards this attachment started. */
  close(): Promise<void>;
};

export function attachNode(h: NodeHandle): AttachedNode {
  const forwards: NodePort[] = [];
  return {
    handle: h,
    name: h.name,
    runDir: h.runDir,
    ip: h.ip,
    dnsIp: h.dnsIp,
    netns: h.netns,
    busyboxImage: h.busyboxImage,
    registryHostsDir: h.registryHostsDir,
    kubeletLog: h.kubeletLog,
    podLogs: (namespace, pod) => podLogDir(join(h.runDir, 'kubelet', 'pod-logs'), namespace, pod),
    exec: (command, args) => execInNode(h.holderPid, command, args),
    importImage: (archive) => importImages(h.containerdSocket, [archive]),
    forward: async (host, port) => {
      const f = await forwardIntoNode(h.runDir, h.connectSocket, host, port);
      forwards.push(f);
      return f;
    },
    close: async () => {
      await Promise.all(forwards.splice(0).map((f) => f.close()));
    },
  };
}
