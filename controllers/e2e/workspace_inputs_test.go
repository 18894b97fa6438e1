package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

func secretKey(name, key string) *magosv1.VariableSource {
	return &magosv1.VariableSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}}
}

func configMapKey(name, key string) *magosv1.VariableSource {
	return &magosv1.VariableSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}}
}

func outputsOf(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	var s corev1.Secret
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name + "-outputs"}, &s))
	out := map[string]string{}
	for k, v := range s.Data {
		out[k] = string(v)
	}
	return out
}

// TestWorkspaceInputsFromProjectAndVariableSets covers precedence (Project
// sets < Workspace sets < inline), ConfigMap HCL list/map values, a
// Secret-backed sensitive variable that never leaks, and Secret rotation
// triggering a re-plan.
func TestWorkspaceInputsFromProjectAndVariableSets(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	sentinel := "sentinel-" + rand.String(16)
	require.NoError(t, env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: s.ns},
		StringData: map[string]string{"token": sentinel}}))
	require.NoError(t, env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "net", Namespace: s.ns},
		Data: map[string]string{"zones": `["a", "b"]`, "tags": `{ team = "infra", tier = "gold" }`}}))
	require.NoError(t, env.Client.Create(ctx, &magosv1.VariableSet{ObjectMeta: metav1.ObjectMeta{Name: "platform", Namespace: s.ns},
		Spec: magosv1.VariableSetSpec{Variables: []magosv1.Variable{
			{Name: "region", Value: ptr.To("project-region")},
			{Name: "owner", Value: ptr.To("project-owner")},
			{Name: "zones", ValueFrom: configMapKey("net", "zones"), HCL: true},
			{Name: "tags", ValueFrom: configMapKey("net", "tags"), HCL: true},
		}}}))
	require.NoError(t, env.Client.Create(ctx, &magosv1.VariableSet{ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: s.ns},
		Spec: magosv1.VariableSetSpec{Variables: []magosv1.Variable{
			{Name: "region", Value: ptr.To("team-region")},
			{Name: "owner", Value: ptr.To("team-owner")},
			{Name: "token", ValueFrom: secretKey("api", "token"), Sensitive: true},
		}}}))
	require.NoError(t, env.Client.Create(ctx, &magosv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "platform", Namespace: s.ns},
		Spec: magosv1.ProjectSpec{VariableSetRefs: []magosv1.LocalObjectReference{{Name: "platform"}}}}))

	rev := s.gitRepository("infra", copyConfig(t, "inputs"))
	s.newWorkspace("layered", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.ProjectRef = &magosv1.LocalObjectReference{Name: "platform"}
		ws.Spec.VariableSetRefs = []magosv1.LocalObjectReference{{Name: "team"}}
		ws.Spec.Vars = []magosv1.Variable{{Name: "owner", Value: ptr.To("inline-owner")}}
	})
	ws := s.waitWorkspace("layered", 3*time.Minute, "applies", appliedRevision(rev))

	out := outputsOf(t, s.ns, "layered")
	assert.Equal(t, "team-region", out["region"], "a Workspace VariableSet overrides the Project's")
	assert.Equal(t, "inline-owner", out["owner"], "inline vars override every VariableSet")
	assert.Equal(t, "a,b", out["zones"], "an HCL list from a ConfigMap")
	assert.Equal(t, "team=infra,tier=gold", out["tags"], "an HCL map from a ConfigMap")
	assert.Equal(t, fmt.Sprintf("%x", sha256Sum(sentinel)), out["token_digest"], "the Secret-backed value reached OpenTofu")
	firstPlan := ws.Status.Plan.ID

	// Rotating the Secret changes the inputs digest and re-plans.
	var secret corev1.Secret
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "api"}, &secret))
	rotated := "rotated-" + rand.String(16)
	secret.Data = map[string][]byte{"token": []byte(rotated)}
	require.NoError(t, env.Client.Update(ctx, &secret))
	ws = s.waitWorkspace("layered", 3*time.Minute, "re-plans and applies the rotated Secret", func(ws *magosv1.Workspace) bool {
		return ws.Status.LastApplied != nil && ws.Status.LastApplied.PlanID != firstPlan && ws.Status.Phase == magosv1.PhaseIdle
	})
	assert.Equal(t, ws.Status.InputsDigest, ws.Status.Plan.InputsDigest, "the plan records the inputs digest it used")
	assert.Equal(t, fmt.Sprintf("%x", sha256Sum(rotated)), outputsOf(t, s.ns, "layered")["token_digest"])

	assertNowhere(t, s, sentinel)
	assertNowhere(t, s, rotated)
}

func TestWorkspaceWaitsForMissingVariableSetKey(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	require.NoError(t, env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: s.ns},
		StringData: map[string]string{"other": "x"}}))
	require.NoError(t, env.Client.Create(ctx, &magosv1.VariableSet{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: s.ns},
		Spec: magosv1.VariableSetSpec{Variables: []magosv1.Variable{{Name: "secret_word", ValueFrom: secretKey("api", "word")}}}}))
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("waiting", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.VariableSetRefs = []magosv1.LocalObjectReference{{Name: "creds"}}
	})
	// Until the variableset-controller has looked, the VariableSet is only
	// not Ready; then the Workspace's message names the missing key.
	s.waitWorkspace("waiting", time.Minute, "waits for the VariableSet and names the missing key", func(ws *magosv1.Workspace) bool {
		c := conditions.Get(ws, magosv1.ReadyCondition)
		return c != nil && c.Reason == magosv1.ReasonVariableSetNotReady && strings.Contains(c.Message, "word")
	})
	require.Never(t, func() bool { return planJobs(t, s.ns, "waiting") > 0 }, 3*time.Second, 250*time.Millisecond,
		"no run starts with partial inputs")

	var secret corev1.Secret
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "api"}, &secret))
	secret.Data["word"] = []byte("now-present")
	require.NoError(t, env.Client.Update(ctx, &secret))
	s.waitWorkspace("waiting", 3*time.Minute, "recovers on its own and applies", appliedRevision(rev))
}

func TestWorkspaceSourceNotAllowedByProject(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	require.NoError(t, env.Client.Create(ctx, &magosv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "strict", Namespace: s.ns},
		Spec: magosv1.ProjectSpec{SourceAllowList: []magosv1.SourceRule{{Kind: "GitRepository", Name: "approved-*"}}}}))
	s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("outsider", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.ProjectRef = &magosv1.LocalObjectReference{Name: "strict"}
	})
	ws := s.waitWorkspace("outsider", time.Minute, "is refused", func(ws *magosv1.Workspace) bool {
		return conditions.IsTrue(ws, magosv1.StalledCondition)
	})
	assert.Equal(t, magosv1.ReasonSourceNotAllowed, conditions.Get(ws, magosv1.StalledCondition).Reason)
	assert.Contains(t, conditions.Get(ws, magosv1.StalledCondition).Message, "not allowed by Project strict")
	require.Never(t, func() bool { return planJobs(t, s.ns, "outsider") > 0 }, 3*time.Second, 250*time.Millisecond,
		"a Workspace whose source is not allowed never runs")
}
