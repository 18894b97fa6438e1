package plantest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
)

// GreetingPlan is the plan JSON of a plan that creates one resource.
const GreetingPlan = `{"format_version":"1.2","terraform_version":"1.10.6","resource_changes":[{"address":"terraform_data.greeting","mode":"managed","type":"terraform_data","name":"greeting","provider_name":"terraform.io/builtin/terraform","change":{"actions":["create"],"before":null,"after":{"input":"hello","triggers_replace":null},"after_unknown":{"id":true,"output":true},"before_sensitive":false,"after_sensitive":{}}}],"output_changes":{"message":{"actions":["create"],"before":null,"after_unknown":true,"before_sensitive":false,"after_sensitive":false}}}`

// ForgedText is what plan-time code can make the plan run store as its
// text: the plan with nothing to do.
const ForgedText = "No changes. Your infrastructure matches the configuration.\n"

// MemSecrets holds a Workspace's plan Secrets in memory.
type MemSecrets map[string]*corev1.Secret

// Get reads Secret name.
func (m MemSecrets) Get(_ context.Context, name string, _ metav1.GetOptions) (*corev1.Secret, error) {
	s, ok := m[name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
	}
	return s.DeepCopy(), nil
}

// Update replaces Secret s, which must exist.
func (m MemSecrets) Update(_ context.Context, s *corev1.Secret, _ metav1.UpdateOptions) (*corev1.Secret, error) {
	if _, ok := m[s.Name]; !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, s.Name)
	}
	m[s.Name] = s.DeepCopy()
	return s, nil
}

// StoredPlan stores a plan of Workspace hello as its plan run stores it,
// with planJSON and text, and returns its status as the controller
// records it: the digest of the JSON and the bundle digest of what was
// stored. The bundle is sealed, so it is shown: the text in it is what
// the run wrote.
func StoredPlan(t testing.TB, planJSON, text string, withoutGate bool) (MemSecrets, *magosv1.PlanStatus) {
	t.Helper()
	m := MemSecrets{}
	owner := planstore.WorkspaceOwner("hello", "2c7a3c86-2f0f-4d43-9c1e-0d8a9f0c1a11")
	for i := range magosv1.DefaultPlanChunks {
		s := planstore.EmptyChunk("hello", i, owner)
		m[s.Name] = s
	}
	meta, err := planstore.Store(context.Background(), m, planstore.Input{
		Workspace: "hello", Owner: owner, ID: "plan-1", JSON: []byte(planJSON), Text: []byte(text), Binary: []byte("binary"),
	})
	require.NoError(t, err)
	return m, &magosv1.PlanStatus{ID: meta.ID, Digest: meta.Digest, BundleDigest: meta.SHA256, Revision: "main@sha1:abc",
		Add: 1, HasChanges: true, AppliedWithoutGate: withoutGate, Policy: &magosv1.PolicyVerdict{Passed: true}}
}
