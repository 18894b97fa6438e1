// Command kube-apiserver is the next minor of the real Kubernetes API server
// (for the compatibility run), built from the
// k8s.io/kubernetes module so the local control plane needs no downloads
// beyond the Go module proxy.
package main

import (
	"os"

	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
