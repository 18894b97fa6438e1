package command

import (
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magos-dev/magos/cli/internal/ops"
)

// factory makes the clients of a command from kubectl's flags
// (--kubeconfig, --context, -n, …).
type factory struct {
	flags   *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams
}

// client is a client for Magos and core objects that can also watch.
func (f *factory) client() (client.WithWatch, error) {
	cfg, err := f.flags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	return client.NewWithWatch(cfg, client.Options{Scheme: ops.Scheme})
}

// clientset is the typed core clientset, for Pod logs.
func (f *factory) clientset() (kubernetes.Interface, error) {
	cfg, err := f.flags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// namespace is the namespace of -n, else the kubeconfig context's.
func (f *factory) namespace() (string, error) {
	ns, _, err := f.flags.ToRawKubeConfigLoader().Namespace()
	return ns, err
}

// target is the object named name in the namespace of the flags.
func (f *factory) target(name string) (*ops.Target, error) {
	c, err := f.client()
	if err != nil {
		return nil, err
	}
	ns, err := f.namespace()
	if err != nil {
		return nil, err
	}
	return ops.NewTarget(c, ns, name), nil
}
