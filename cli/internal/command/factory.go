package command

import (
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// scheme knows the Magos and core kinds.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(magosv1.AddToScheme(s))
	return s
}()

// factory makes the clients of a command from kubectl's flags
// (--kubeconfig, --context, -n, …).
type factory struct {
	flags   *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams
	// ns, when set, is the namespace instead of the flags' (the UI acts
	// in the namespace of the object a page shows).
	ns string
}

// in is f acting in namespace ns and writing its messages to out.
func (f *factory) in(ns string, out io.Writer) *factory {
	streams := f.streams
	streams.Out = out
	return &factory{flags: f.flags, streams: streams, ns: ns}
}

// client is a client for Magos and core objects that can also watch.
func (f *factory) client() (client.WithWatch, error) {
	cfg, err := f.flags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	return client.NewWithWatch(cfg, client.Options{Scheme: scheme})
}

// namespace is the namespace of -n, else the kubeconfig context's.
func (f *factory) namespace() (string, error) {
	if f.ns != "" {
		return f.ns, nil
	}
	ns, _, err := f.flags.ToRawKubeConfigLoader().Namespace()
	return ns, err
}
