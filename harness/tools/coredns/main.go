// Command coredns is CoreDNS v1.12 with only the plugins the harness's cluster DNS uses (test/support/node/dns.ts).
// CoreDNS's own main links every plugin, the cloud DNS providers with their SDKs among them; an external main with a
// short import list is CoreDNS's documented way to choose plugins, and builds in a fraction of the time.
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() {
	coremain.Run()
}
