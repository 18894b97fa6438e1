package decide

import (
	"fmt"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// erroredStateMessage says that run es.Job changed real resources but could
// not write their state back, where that state is and how to restore it:
// a plan against the stale state Secret would create them again.
func erroredStateMessage(name string, es *magosv1.ErroredStateStatus) string {
	restore := fmt.Sprintf("the state the engine could not write back is in Secret %s (key %s, gzip'd state JSON): "+
		"push it to the state (e.g. kubectl get secret %s -o jsonpath='{.data.%s}' | base64 -d | gunzip > errored.tfstate, then tofu state push errored.tfstate "+
		"with this configuration, or copy the key into Secret %s)",
		es.Secret, magosv1.StateKey, es.Secret, magosv1.StateKey, es.StateSecret)
	if es.Secret == "" {
		restore = "the state could not be saved either: import the resources the run created into the state, or remove them by hand"
	}
	return fmt.Sprintf("Run %s changed real resources but could not write their state to Secret %s, and no run starts until it is restored: %s; "+
		"then run: kubectl annotate workspace %s %s=%s --overwrite",
		es.Job, es.StateSecret, restore, name, magosv1.StateRestoredAnnotation, es.Job)
}
