// Command kubectl is the real kubectl, built from the k8s.io/kubectl module
// at the same version as the local kube-apiserver, for the demo and for
// inspecting the local control plane.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
