// Command network-policies is kube-network-policies v0.8 (sigs.k8s.io), the NetworkPolicy agent Kubernetes' SIG
// Network maintains, for the harness's nodes: the CNI bridge enforces no NetworkPolicy by itself, and a policy that
// nothing enforces proves nothing. Upstream's main takes only in-cluster credentials; the node's agent runs as a
// process of the node, so this main takes a kubeconfig and otherwise starts the same controller.
//
//	network-policies --kubeconfig FILE --hostname-override NODE [--nfqueue-id N]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/kube-network-policies/pkg/networkpolicy"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster whose NetworkPolicies this node enforces")
	node := flag.String("hostname-override", "", "name of the Node whose Pods this agent guards")
	queue := flag.Int("nfqueue-id", 100, "netfilter queue the agent reads packets from")
	klog.InitFlags(nil)
	flag.Parse()
	if *kubeconfig == "" || *node == "" {
		fmt.Fprintln(os.Stderr, "usage: network-policies --kubeconfig FILE --hostname-override NODE [--nfqueue-id N]")
		os.Exit(2)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, *kubeconfig, *node, *queue); err != nil {
		fmt.Fprintf(os.Stderr, "network-policies: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig, node string, queue int) error {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("reading %s: %w", kubeconfig, err)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	controller, err := networkpolicy.NewController(
		client,
		factory.Networking().V1().NetworkPolicies(),
		factory.Core().V1().Namespaces(),
		factory.Core().V1().Pods(),
		nil, nil, nil, nil,
		networkpolicy.Config{
			// Fail closed: a Pod a policy selects gets no new connection while the agent is down.
			FailOpen: false,
			QueueID:  queue,
			NodeName: node,
			// The machines' kernels (6.12 and newer) carry the conntrack fix this works around.
			NetfilterBug1766Fix: false,
			// NRI stays enabled though Debian's containerd 1.6 has no NRI socket (its plugin logs that and exits; Pod
			// addresses come from the API server): v0.8.0 disabled dereferences the missing plugin for every packet of
			// an address no Pod of the cluster has (another cluster's Pod behind a load balancer) and panics.
		},
	)
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	return controller.Run(ctx)
}
