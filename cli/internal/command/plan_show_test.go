package command

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/cli/internal/planrender"
)

// greetingPlan is the plan JSON of a plan that creates one resource.
const greetingPlan = `{"format_version":"1.2","terraform_version":"1.10.6","resource_changes":[{"address":"terraform_data.greeting","mode":"managed","type":"terraform_data","name":"greeting","provider_name":"terraform.io/builtin/terraform","change":{"actions":["create"],"before":null,"after":{"input":"hello","triggers_replace":null},"after_unknown":{"id":true,"output":true},"before_sensitive":false,"after_sensitive":{}}}],"output_changes":{"message":{"actions":["create"],"before":null,"after_unknown":true,"before_sensitive":false,"after_sensitive":false}}}`

// forgedText is what plan-time code can make the plan run store as its
// text: the plan with nothing to do.
const forgedText = "No changes. Your infrastructure matches the configuration.\n"

// memSecrets holds a Workspace's plan Secrets in memory.
type memSecrets map[string]*corev1.Secret

func (m memSecrets) Get(_ context.Context, name string, _ metav1.GetOptions) (*corev1.Secret, error) {
	s, ok := m[name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
	}
	return s.DeepCopy(), nil
}

func (m memSecrets) Update(_ context.Context, s *corev1.Secret, _ metav1.UpdateOptions) (*corev1.Secret, error) {
	if _, ok := m[s.Name]; !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, s.Name)
	}
	m[s.Name] = s.DeepCopy()
	return s, nil
}

// storedPlan stores a plan of Workspace hello as its plan run stores it,
// with planJSON and text, and returns its status as the controller
// records it: the digest of the JSON and the bundle digest of what was
// stored. The bundle is sealed, so it is shown: the text in it is what
// the run wrote.
func storedPlan(t *testing.T, planJSON, text string, withoutGate bool) (memSecrets, *magosv1.PlanStatus) {
	t.Helper()
	m := memSecrets{}
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

// The run that makes a plan runs the configuration's code, which can
// write the text the run stores (into the engine's output, or in place of
// the rendering). plan show renders what an approver reads from the plan
// JSON the digest covers: the run's text never appears as the plan, and
// with --engine-text only under a NOT VERIFIED line.
func TestPlanShowRendersThePlanFromTheVerifiedJSON(t *testing.T) {
	ctx := context.Background()
	g, p := storedPlan(t, greetingPlan, forgedText, false)

	shown, err := readablePlan(ctx, g, "hello", p, planrender.Options{})
	require.NoError(t, err)
	assert.True(t, shown.Verified)
	assert.Equal(t, renderedSource, shown.Source)
	assert.Contains(t, shown.Text, "# terraform_data.greeting will be created")
	assert.NotContains(t, shown.Text, "No changes")

	var out bytes.Buffer
	require.NoError(t, writePlan(ctx, &out, g, "hello", p, planrender.Options{}, false))
	assert.Contains(t, out.String(), "Digest "+p.Digest+" (stored bundle "+p.BundleDigest+", verified)\n\n"+renderedSource+"\n\n")
	assert.Contains(t, out.String(), "Plan: 1 to add, 0 to change, 0 to destroy.")
	assert.NotContains(t, out.String(), "No changes", "the run's text is not shown")
	assert.Contains(t, out.String(), "Policy: Passed")

	out.Reset()
	require.NoError(t, writePlan(ctx, &out, g, "hello", p, planrender.Options{}, true))
	rendered, runText, found := strings.Cut(out.String(), runTextSource)
	require.True(t, found, "the run's text is marked: %s", out.String())
	assert.NotContains(t, rendered, "No changes")
	assert.Contains(t, runText, "No changes", "and shown only below the mark")
	assert.True(t, strings.HasPrefix(runTextSource, "NOT VERIFIED"))
}

// A plan applied without a gate has no plan JSON: its text is all there
// is, and it is shown marked as not verified, never as the verified plan.
func TestPlanShowMarksTheTextOfAPlanAppliedWithoutAGate(t *testing.T) {
	ctx := context.Background()
	g, p := storedPlan(t, "", forgedText, true)
	shown, err := readablePlan(ctx, g, "hello", p, planrender.Options{})
	require.NoError(t, err)
	assert.False(t, shown.Verified)
	assert.Equal(t, fastTextSource, shown.Source)
	assert.Equal(t, forgedText, shown.Text)

	var out bytes.Buffer
	require.NoError(t, writePlan(ctx, &out, g, "hello", p, planrender.Options{}, false))
	assert.Contains(t, out.String(), fastTextSource+"\n\n"+strings.TrimRight(forgedText, "\n"))

	// A fast run that had to render the plan JSON: rendered, still marked.
	g, p = storedPlan(t, greetingPlan, "", true)
	shown, err = readablePlan(ctx, g, "hello", p, planrender.Options{})
	require.NoError(t, err)
	assert.False(t, shown.Verified)
	assert.Equal(t, fastJSONSource, shown.Source)
	assert.Contains(t, shown.Text, "terraform_data.greeting will be created")
}

// The UI shows the same: the rendering of the verified JSON for a gated
// plan, and the run's text only in a block marked as not verified.
func TestUIPlanShowsWhereItComesFrom(t *testing.T) {
	ctx := context.Background()
	render := func(g planstore.Getter, p *magosv1.PlanStatus) string {
		t.Helper()
		shown, err := readablePlan(ctx, g, "hello", p, planrender.Options{})
		require.NoError(t, err)
		ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "team"}}
		ws.Status.Plan = p
		d := workspaceData{WS: ws, Plan: strings.Split(strings.TrimRight(shown.Text, "\n"), "\n"), PlanVerified: shown.Verified, PlanSource: shown.Source}
		var b bytes.Buffer
		require.NoError(t, uiTemplates.ExecuteTemplate(&b, "workspace.html", page{Data: d}))
		return b.String()
	}
	html := render(storedPlan(t, greetingPlan, forgedText, false))
	assert.Contains(t, html, `<p class="plan-source verified">Rendered by kubectl magos from the plan JSON`)
	assert.Contains(t, html, "terraform_data.greeting will be created")
	assert.NotContains(t, html, "No changes")
	assert.NotContains(t, html, "NOT VERIFIED")

	html = render(storedPlan(t, "", forgedText, true))
	assert.Contains(t, html, `<p class="plan-source unverified">NOT VERIFIED: `)
	assert.Contains(t, html, `<pre class="plan unverified"`)
}
