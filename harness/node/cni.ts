/**
 * The node's Pod network: Debian's CNI plugins (bridge with host-local addresses; containerd adds loopback itself),
 * one bridge inside the node's network namespace whose address is the node's and the Pods' gateway. No masquerading
 * and no default route out of the namespace: Pods reach each other, Services and the API server bridge, nothing else.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NodeNetwork } from './netns';

export const CNI_BIN_DIR = '/usr/lib/cni';

/** Writes the network list into `<confDir>` (containerd's CRI `conf_dir`); IP leases go to `<stateDir>`. */
export function writeCniConfig(confDir: string, stateDir: string, net: NodeNetwork): void {
  mkdirSync(confDir, { recursive: true });
  const conf = {
    cniVersion: '0.4.0',
    name: 'klutch-kit-node',
    plugins: [
      {
        type: 'bridge',
        bridge: net.bridge,
        isGateway: true,
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet: net.podCidr, gateway: net.nodeIp }]],
          routes: [{ dst: '0.0.0.0/0' }],
          // Default /var/lib/cni/networks is the machine's; leases belong to the run.
          dataDir: stateDir,
        },
      },
    ],
  };
  writeFileSync(join(confDir, '10-klutch-kit-node.conflist'), JSON.stringify(conf, null, 2));
}
