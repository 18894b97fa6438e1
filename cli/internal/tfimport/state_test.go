package tfimport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// The import finds the state by name (tfstate-default-<name>). It takes
// over only what is that Terraform object's: a Secret OpenTofu's
// kubernetes backend wrote for that name, no older than the object, that
// nothing else claims; otherwise only where the person importing names
// the Secret's UID (--adopt-state).
func TestStateRefused(t *testing.T) {
	created := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	tf := terraform(t, "  sourceRef: {kind: GitRepository, name: infra}\n")
	tf.SetCreationTimestamp(metav1.NewTime(created))
	const wsUID = types.UID("ws-1")
	backendLabels := map[string]string{"app.kubernetes.io/managed-by": "terraform", "tfstate": "true", "tfstateSecretSuffix": "network", "tfstateWorkspace": "default"}
	state := func(mutate func(*metav1.ObjectMeta)) *metav1.ObjectMeta {
		m := &metav1.ObjectMeta{Name: "tfstate-default-network", Namespace: "team-a", UID: "secret-1",
			CreationTimestamp: metav1.NewTime(created.Add(time.Minute)), Labels: backendLabels}
		if mutate != nil {
			mutate(m)
		}
		return m
	}
	tests := []struct {
		name    string
		state   *metav1.ObjectMeta
		adopt   string
		refused string
	}{
		{name: "written by the backend after the object", state: state(nil)},
		{name: "written in the second the object was created", state: state(func(m *metav1.ObjectMeta) { m.CreationTimestamp = metav1.NewTime(created) })},
		{name: "taken over by this Workspace already", state: state(func(m *metav1.ObjectMeta) {
			m.CreationTimestamp = metav1.NewTime(created.Add(-time.Hour))
			m.Labels = map[string]string{magosv1.ManagedByLabel: magosv1.ManagedByValue, magosv1.WorkspaceLabel: "network"}
			m.Annotations = map[string]string{magosv1.WorkspaceUIDAnnotation: string(wsUID)}
		})},
		{name: "older than the object", state: state(func(m *metav1.ObjectMeta) { m.CreationTimestamp = metav1.NewTime(created.Add(-time.Hour)) }),
			refused: "created before Terraform object team-a/network"},
		{name: "older than the object, adopted by UID", state: state(func(m *metav1.ObjectMeta) { m.CreationTimestamp = metav1.NewTime(created.Add(-time.Hour)) }),
			adopt: "secret-1"},
		{name: "older than the object, another UID named", state: state(func(m *metav1.ObjectMeta) { m.CreationTimestamp = metav1.NewTime(created.Add(-time.Hour)) }),
			adopt: "secret-0", refused: "--adopt-state=secret-1"},
		{name: "another Workspace's", state: state(func(m *metav1.ObjectMeta) {
			m.Annotations = map[string]string{magosv1.WorkspaceUIDAnnotation: "ws-0"}
		}), refused: "Workspace UID ws-0"},
		{name: "controlled by another object", state: state(func(m *metav1.ObjectMeta) {
			m.OwnerReferences = []metav1.OwnerReference{{Kind: "Terraform", Name: "network", UID: "0000", Controller: new(true)}}
		}), refused: "controlled by Terraform network (UID 0000)"},
		{name: "controlled by this object", state: state(func(m *metav1.ObjectMeta) {
			m.OwnerReferences = []metav1.OwnerReference{{Kind: "Terraform", Name: "network", UID: "1234", Controller: new(true)}}
		})},
		{name: "not written by the kubernetes backend", state: state(func(m *metav1.ObjectMeta) { m.Labels = map[string]string{"app": "x"} }),
			refused: "not labelled as OpenTofu's kubernetes backend labels the state of network"},
		{name: "written by the backend for another suffix", state: state(func(m *metav1.ObjectMeta) {
			m.Labels = map[string]string{"tfstate": "true", "tfstateSecretSuffix": "other", "tfstateWorkspace": "default"}
		}), refused: "not labelled as OpenTofu's kubernetes backend labels the state of network"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := StateRefused(tf, wsUID, tt.state, tt.adopt)
			if tt.refused == "" {
				assert.Empty(t, got)
				return
			}
			assert.Contains(t, got, tt.refused)
		})
	}
}
