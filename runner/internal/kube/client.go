package kube

import (
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// userAgent names the runner in the apiserver's audit log.
const userAgent = "magos-runner"

// Config returns the REST config from the default loading rules, tuned for
// the runner: protobuf on the wire (plan chunks are large binary Secrets)
// and a rate limit that lets a big plan's chunks be written without
// client-side throttling.
func Config() (*rest.Config, error) {
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{})
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the Kubernetes client configuration: %w", err)
	}
	return Tune(cfg), nil
}

// Tune returns a copy of cfg set up as the runner uses it.
func Tune(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.QPS, cfg.Burst = 50, 100
	cfg.UserAgent = userAgent
	return cfg
}

// NewClient returns a clientset from the default loading rules.
func NewClient() (kubernetes.Interface, error) {
	cfg, err := Config()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}
