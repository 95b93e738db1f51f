// Command kube is one binary that runs a Kubernetes cluster for klutch-kit's tests:
//
//	kube etcd [flags]
//	kube kube-apiserver [flags]
//	kube kube-controller-manager [flags]
//	kube kube-scheduler [flags]
//	kube kubelet [flags]
//	kube kube-proxy [flags]
//	kube kubectl [args]
//
// Each mode is the upstream command itself (etcd 3.6, Kubernetes 1.34), built from Go modules because no registry
// this project reaches ships the binaries. kubectl is here for `kubectl apply -k`, the one command an operator types to
// install the bundle `npm run synth` writes (kustomize built in); the tests install it the same way. One multi-call binary links the shared Kubernetes code once: a fraction of
// the size and build time of six binaries.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	kubectl "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	mode, args := os.Args[1], os.Args[2:]
	if os.Getenv("KUBE_EXIT_WITH_PARENT") == "1" {
		go exitWithParent()
	}
	var cmd *cobra.Command
	switch mode {
	case "etcd":
		// etcdmain.Main reads its flags from the slice it is given, program name first.
		etcdmain.Main(append([]string{"etcd"}, args...))
		return
	case "kube-apiserver":
		cmd = apiserver.NewAPIServerCommand()
	case "kube-controller-manager":
		cmd = controllermanager.NewControllerManagerCommand()
	case "kube-scheduler":
		cmd = scheduler.NewSchedulerCommand()
	case "kubelet":
		cmd = kubelet.NewKubeletCommand(context.Background())
	case "kube-proxy":
		cmd = proxy.NewProxyCommand()
	case "kubectl":
		// Upstream's kubectl runs its command through cli.RunNoErrOutput (it prints its own errors).
		os.Args = append([]string{"kubectl"}, args...)
		if err := cli.RunNoErrOutput(kubectl.NewDefaultKubectlCommand()); err != nil {
			kubectlutil.CheckErr(err)
		}
		return
	default:
		usage()
	}
	cmd.SetArgs(args)
	os.Exit(cli.Run(cmd))
}

// exitWithParent ends this process once the process that started it is gone (it is then re-parented), so a test run
// that crashes or is killed leaves no control plane or node behind. Polling getppid works on every Unix, unlike
// PDEATHSIG.
func exitWithParent() {
	parent := os.Getppid()
	for range time.Tick(250 * time.Millisecond) {
		if os.Getppid() != parent {
			fmt.Fprintf(os.Stderr, "kube: parent process %d is gone; exiting\n", parent)
			os.Exit(3)
		}
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: kube etcd|kube-apiserver|kube-controller-manager|kube-scheduler|kubelet|kube-proxy [flags] | kube kubectl [args]")
	os.Exit(2)
}
