package workspace

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/event"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestProjectChangedForMembers: a Project's members reconcile on what they
// read of it, not on the roll-up of their own phases.
func TestProjectChangedForMembers(t *testing.T) {
	base := func() *magosv1.Project {
		return &magosv1.Project{
			ObjectMeta: metav1.ObjectMeta{Name: "fleet", Generation: 2, ResourceVersion: "10"},
			Status: magosv1.ProjectStatus{
				ObservedGeneration: 2,
				Conditions:         []metav1.Condition{{Type: magosv1.ReadyCondition, Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "3 of 5 Workspaces Ready"}},
				SourceAllowList:    []magosv1.SourceRule{{Namespace: "flux-system"}},
				Workspaces:         magosv1.WorkspaceRollup{Total: 5, Ready: 3},
			},
		}
	}
	tests := []struct {
		name   string
		change func(*magosv1.Project)
		passes bool
	}{
		{"only the roll-up and the resource version", func(p *magosv1.Project) { p.Status.Workspaces.Ready = 4; p.ResourceVersion = "11" }, false},
		{"only the Ready condition's message and time", func(p *magosv1.Project) {
			p.Status.Conditions[0].Message = "4 of 5 Workspaces Ready"
			p.Status.Conditions[0].LastTransitionTime = metav1.Now()
		}, false},
		{"Ready no more", func(p *magosv1.Project) { p.Status.Conditions[0].Status = metav1.ConditionFalse }, true},
		{"a new generation", func(p *magosv1.Project) { p.Generation = 3 }, true},
		{"observed a new generation", func(p *magosv1.Project) { p.Status.ObservedGeneration = 3 }, true},
		{"the source allow list", func(p *magosv1.Project) { p.Status.SourceAllowList = nil }, true},
		{"an allowed annotation", func(p *magosv1.Project) { p.Status.AllowedServiceAccountAnnotations = []string{"x"} }, true},
		{"being deleted", func(p *magosv1.Project) { now := metav1.Now(); p.DeletionTimestamp = &now }, true},
		{"a label", func(p *magosv1.Project) { p.Labels = map[string]string{"team": "a"} }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			older, newer := base(), base()
			tt.change(newer)
			assert.Equal(t, tt.passes, projectChangedForMembers.Update(event.UpdateEvent{ObjectOld: older, ObjectNew: newer}))
		})
	}
	assert.True(t, projectChangedForMembers.Create(event.CreateEvent{Object: base()}))
	assert.True(t, projectChangedForMembers.Delete(event.DeleteEvent{Object: base()}))
}

// TestPolicyChanged: the gate evaluates again when a policy's spec
// changes or a cluster policy starts or stops allowing waivers, not on
// other metadata.
func TestPolicyChanged(t *testing.T) {
	policy := func(generation int64, annotations map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetName("no-destroy")
		u.SetGeneration(generation)
		u.SetAnnotations(annotations)
		return u
	}
	tests := []struct {
		name     string
		old, new *unstructured.Unstructured
		passes   bool
	}{
		{"a new spec", policy(1, nil), policy(2, nil), true},
		{"waivers allowed", policy(1, nil), policy(1, map[string]string{magosv1.WaivableAnnotation: "true"}), true},
		{"waivers no longer allowed", policy(1, map[string]string{magosv1.WaivableAnnotation: "true"}), policy(1, nil), true},
		{"another annotation", policy(1, nil), policy(1, map[string]string{"team": "platform"}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.passes, policyChanged.Update(event.UpdateEvent{ObjectOld: tt.old, ObjectNew: tt.new}))
		})
	}
	assert.True(t, policyChanged.Create(event.CreateEvent{Object: policy(1, nil)}))
}
