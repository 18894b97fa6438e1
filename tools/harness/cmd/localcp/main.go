// Command localcp runs the local control plane for the demo: a real
// kube-apiserver and etcd from bin/k8s with the Magos, Flux source and
// Kyverno ValidatingPolicy CRDs installed. It writes an admin kubeconfig and
// runs until it is signalled.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/magos-dev/magos/tools/harness/testenv"
)

func main() {
	kubeconfig := flag.String("write-kubeconfig", "bin/demo/kubeconfig", "where to write the admin kubeconfig")
	flag.Parse()
	if err := run(*kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, "localcp:", err)
		os.Exit(1)
	}
}

func run(kubeconfig string) error {
	env, err := testenv.Start()
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()

	data, err := os.ReadFile(env.Kubeconfig)
	if err != nil {
		return err
	}
	if err := os.WriteFile(kubeconfig, data, 0o600); err != nil {
		return err
	}
	defer os.Remove(kubeconfig)
	fmt.Printf("Local control plane is up at %s; kubeconfig: %s\n", env.Config.Host, kubeconfig)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	fmt.Println("Stopping the local control plane")
	return nil
}
