// Package networkpolicy: this file is added to kube-network-policies' package of that name at build time, in a copy
// of the module (harness/tools/network-policies.ts). The machines' kernels have no nftables `queue` expression
// (CONFIG_NFT_QUEUE) but do have the xtables NFQUEUE target through nft_compat, which hands packets to the same
// netfilter queue: upstream's two `queue` rules use this instead; nothing else of upstream changes.
package networkpolicy

import (
	"encoding/binary"

	"github.com/google/nftables/expr"
	"github.com/google/nftables/xt"
)

// xtQueue is `queue num <num> [bypass]` as the xtables target NFQUEUE revision 3: struct xt_NFQ_info_v3 { __u16
// queuenum; __u16 queues_total; __u16 flags; } in host order, flags bit 0 (NFQ_FLAG_BYPASS) letting packets pass
// while no program reads the queue.
func xtQueue(num uint16, bypass bool) *expr.Target {
	info := make([]byte, 6)
	binary.NativeEndian.PutUint16(info[0:], num)
	binary.NativeEndian.PutUint16(info[2:], 1)
	if bypass {
		binary.NativeEndian.PutUint16(info[4:], 1)
	}
	unknown := xt.Unknown(info)
	return &expr.Target{Name: "NFQUEUE", Rev: 3, Info: &unknown}
}
