package realnode

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// describePods says what the Pods of ns are doing and what the node says
// of itself, for an install that did not become Ready: a Pod the kubelet
// evicted or cannot admit names the reason, and the node its pressure
// conditions and taints.
func describePods(ns string) error {
	ctx := context.Background()
	var b strings.Builder
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		return err
	}
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "pod %s: %s", p.Name, p.Status.Phase)
		if p.Status.Reason != "" || p.Status.Message != "" {
			fmt.Fprintf(&b, " (%s: %s)", p.Status.Reason, p.Status.Message)
		}
		for _, c := range p.Status.Conditions {
			if c.Status != corev1.ConditionTrue && c.Message != "" {
				fmt.Fprintf(&b, " [%s=%s %s: %s]", c.Type, c.Status, c.Reason, c.Message)
			}
		}
		for _, c := range p.Status.ContainerStatuses {
			fmt.Fprintf(&b, " [%s ready=%t restarts=%d %+v]", c.Name, c.Ready, c.RestartCount, c.State)
		}
		b.WriteString("\n")
	}
	var nodes corev1.NodeList
	if err := k8s.List(ctx, &nodes); err != nil {
		return errors.Join(errors.New(b.String()), err)
	}
	for _, n := range nodes.Items {
		fmt.Fprintf(&b, "node %s: taints %v", n.Name, n.Spec.Taints)
		for _, c := range n.Status.Conditions {
			if (c.Type == corev1.NodeReady) != (c.Status == corev1.ConditionTrue) {
				fmt.Fprintf(&b, " [%s=%s %s: %s]", c.Type, c.Status, c.Reason, c.Message)
			}
		}
		b.WriteString("\n")
	}
	return errors.New(b.String())
}
