// Command kube-node is the real kubelet, kube-controller-manager,
// kube-scheduler and kube-proxy in one binary, built from the
// k8s.io/kubernetes module at the same version as the local kube-apiserver
// for the real-node test tier. One binary links the shared Kubernetes
// packages once instead of four times.
//
// The component is the first argument or, when the binary is invoked through
// a link named after a component, the name it was invoked by:
//
//	kube-node kubelet --config=...
//	kube-node kube-proxy --config=...
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	_ "time/tzdata" // CronJob time zones in the controller manager

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"

	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

// components maps a component name to its upstream command constructor.
var components = map[string]func() *cobra.Command{
	"kubelet":                 func() *cobra.Command { return kubelet.NewKubeletCommand(context.Background()) },
	"kube-controller-manager": controllermanager.NewControllerManagerCommand,
	"kube-scheduler":          func() *cobra.Command { return scheduler.NewSchedulerCommand() },
	"kube-proxy":              proxy.NewProxyCommand,
}

func main() {
	name, args := component(os.Args)
	newCommand, ok := components[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "usage: %s <%s> [flags]\n", filepath.Base(os.Args[0]), strings.Join(names(), "|"))
		os.Exit(2)
	}
	command := newCommand()
	command.SetArgs(args)
	os.Exit(cli.Run(command))
}

// component returns the component argv names and the arguments left for it:
// the invoked name if it is a component's, otherwise the first argument.
func component(argv []string) (string, []string) {
	if base := filepath.Base(argv[0]); components[base] != nil {
		return base, argv[1:]
	}
	if len(argv) < 2 {
		return "", nil
	}
	return argv[1], argv[2:]
}

func names() []string {
	out := make([]string, 0, len(components))
	for name := range components {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}
