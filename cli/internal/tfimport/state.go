package tfimport

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// The labels OpenTofu's kubernetes backend puts on the state Secrets it
// writes.
const (
	backendStateLabel     = "tfstate"
	backendSuffixLabel    = "tfstateSecretSuffix"
	backendWorkspaceLabel = "tfstateWorkspace"
)

// StateRefused says why Secret state, found by its name
// (magosv1.StateSecretName of the Terraform object tf's name), is not tf's
// state for the Workspace of UID wsUID to take over, or "". It is tf's when
// the engine's kubernetes backend wrote it for that name in workspace
// "default" (its labels), no earlier than tf was created (a Secret older
// than the object was left by a deleted object of the same name, or
// written by someone else before it existed), and nothing else claims it:
// no other Workspace's UID, no controller but tf. A Secret the Workspace
// already took over is its own. adopt, the UID of the Secret as the
// person importing names it, takes it over all the same.
func StateRefused(tf *unstructured.Unstructured, wsUID types.UID, state metav1.Object, adopt string) string {
	if uid := state.GetAnnotations()[magosv1.WorkspaceUIDAnnotation]; uid != "" && uid == string(wsUID) {
		return ""
	}
	if adopt != "" && adopt == string(state.GetUID()) {
		return ""
	}
	why := ""
	l := state.GetLabels()
	switch uid := state.GetAnnotations()[magosv1.WorkspaceUIDAnnotation]; {
	case uid != "":
		why = fmt.Sprintf("it is the state of Workspace UID %s", uid)
	case metav1.GetControllerOfNoCopy(state) != nil && metav1.GetControllerOfNoCopy(state).UID != tf.GetUID():
		ref := metav1.GetControllerOfNoCopy(state)
		why = fmt.Sprintf("it is controlled by %s %s (UID %s), not by this Terraform object (UID %s)", ref.Kind, ref.Name, ref.UID, tf.GetUID())
	case l[backendStateLabel] != "true" || l[backendSuffixLabel] != tf.GetName() || l[backendWorkspaceLabel] != "default":
		why = fmt.Sprintf("it is not labelled as OpenTofu's kubernetes backend labels the state of %s (%s: \"true\", %s: %s, %s: default)",
			tf.GetName(), backendStateLabel, backendSuffixLabel, tf.GetName(), backendWorkspaceLabel)
	case state.GetCreationTimestamp().Time.Before(tf.GetCreationTimestamp().Time):
		why = fmt.Sprintf("it was created before Terraform object %s/%s (%s, the object %s): it was left by an earlier object of that name, or written by someone else",
			tf.GetNamespace(), tf.GetName(), state.GetCreationTimestamp().UTC().Format(time.RFC3339), tf.GetCreationTimestamp().UTC().Format(time.RFC3339))
	default:
		return ""
	}
	return fmt.Sprintf("state Secret %s is not this Terraform object's: %s; if it is, import the object by name with --adopt-state=%s",
		state.GetName(), why, state.GetUID())
}
