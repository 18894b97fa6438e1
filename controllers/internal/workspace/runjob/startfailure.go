package runjob

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// startFailureReasons are the kubelet's waiting reasons of a container that
// will not start as it is, each with the run's failure reason: an image it
// cannot get, or a container it cannot create. The kubelet keeps retrying
// them until the Pod's deadline.
var startFailureReasons = map[string]string{
	"ErrImagePull":               magosv1.ReasonImagePullFailed,
	"ImagePullBackOff":           magosv1.ReasonImagePullFailed,
	"InvalidImageName":           magosv1.ReasonImagePullFailed,
	"ErrImageNeverPull":          magosv1.ReasonImagePullFailed,
	"ImageInspectError":          magosv1.ReasonImagePullFailed,
	"CreateContainerConfigError": magosv1.ReasonRunStartFailed,
	"CreateContainerError":       magosv1.ReasonRunStartFailed,
}

// StartFailure describes the first container of pod, init containers
// first, that will not start, and the run's failure reason; "" when there
// is none.
func StartFailure(pod *corev1.Pod) (reason, msg string) {
	check := func(kind string, statuses []corev1.ContainerStatus) (string, string) {
		for _, cs := range statuses {
			w := cs.State.Waiting
			if w == nil || startFailureReasons[w.Reason] == "" {
				continue
			}
			reason := startFailureReasons[w.Reason]
			msg := fmt.Sprintf("%scontainer %q of Pod %s cannot pull image %s (%s)", kind, cs.Name, pod.Name, cs.Image, w.Reason)
			if reason == magosv1.ReasonRunStartFailed {
				msg = fmt.Sprintf("%scontainer %q of Pod %s cannot be created (%s)", kind, cs.Name, pod.Name, w.Reason)
			}
			if w.Message != "" {
				msg += ": " + w.Message
			}
			return reason, msg
		}
		return "", ""
	}
	if reason, msg := check("init ", pod.Status.InitContainerStatuses); reason != "" {
		return reason, msg
	}
	return check("", pod.Status.ContainerStatuses)
}
