package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// A VariableSet must not steer the run away from what Magos set up: the
// artifact URL, the engine's CLI configuration (provider sources), the
// Kubernetes API. Admission refuses the names; a VariableSet that carries
// one anyway (admitted before the rule) stalls the Workspace before any Job.
func TestReservedEnvironmentNeverReachesARun(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStackWith(t, stackOptions{NoVariableSetController: true})
	s.gitRepository("infra", copyConfig(t, "hello"))

	for _, name := range []string{magosv1.EnvArtifactURL, "TF_CLI_CONFIG_FILE"} {
		vs := &magosv1.VariableSet{
			ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: s.ns},
			Spec:       magosv1.VariableSetSpec{Env: []magosv1.EnvEntry{{Name: name, Value: ptr.To("https://attacker.invalid/x.tar.gz")}}},
		}
		err := env.Client.Create(ctx, vs)
		require.True(t, apierrors.IsInvalid(err), "env %s must be refused at admission, got %v", name, err)
		assert.ErrorContains(t, err, "name is reserved")
	}

	for _, name := range []string{magosv1.EnvArtifactURL, "TF_CLI_CONFIG_FILE"} {
		setName := "legacy-" + rand.String(5)
		vs := &magosv1.VariableSet{ObjectMeta: metav1.ObjectMeta{Name: setName, Namespace: s.ns}}
		require.NoError(t, env.Client.Create(ctx, vs))
		// What an older VariableSet's status could hold.
		vs.Status = magosv1.VariableSetStatus{
			ObservedGeneration: vs.Generation,
			Env:                []corev1.EnvVar{{Name: name, Value: "/tmp/attacker"}},
		}
		conditions.MarkReady(vs, metav1.ConditionTrue, "Rendered", "rendered")
		require.NoError(t, env.Client.Status().Update(ctx, vs))

		wsName := "uses-" + setName
		s.newWorkspace(wsName, "infra", func(ws *magosv1.Workspace) {
			ws.Spec.VariableSetRefs = []magosv1.LocalObjectReference{{Name: setName}}
		})
		ws := s.waitWorkspace(wsName, time.Minute, "stalls", func(ws *magosv1.Workspace) bool {
			return conditions.IsTrue(ws, magosv1.StalledCondition)
		})
		stalled := conditions.Get(ws, magosv1.StalledCondition)
		assert.Equal(t, magosv1.ReasonReservedEnvironment, stalled.Reason)
		assert.Contains(t, stalled.Message, "VariableSet "+setName+" sets "+name)
		var jobs batchv1.JobList
		require.NoError(t, env.Client.List(ctx, &jobs, client.InNamespace(s.ns), client.MatchingLabels{magosv1.WorkspaceLabel: wsName}))
		assert.Empty(t, jobs.Items, "the Workspace never runs with it")
	}
}

// The operator's --runner-env values may be credentials: they are masked in
// runner output like sensitive variables. A sensitive literal is refused,
// so it never lands in a Job.
func TestOperatorEnvironmentIsMasked(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	sentinel := "operator-sentinel-" + rand.String(12)
	s := newStackWith(t, stackOptions{RunnerEnv: []string{"TF_VAR_greeting=" + sentinel}})
	rev := s.gitRepository("infra", copyConfig(t, "hello"))

	err := env.Client.Create(ctx, &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "literal", Namespace: s.ns},
		Spec: magosv1.WorkspaceSpec{
			SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"},
			Vars:      []magosv1.Variable{{Name: "secret_word", Value: ptr.To("hunter2-literal"), Sensitive: true}},
		},
	})
	require.True(t, apierrors.IsInvalid(err), "a sensitive literal must be refused, got %v", err)

	s.newWorkspace("hello", "infra", nil)
	s.waitWorkspace("hello", 3*time.Minute, "applies", appliedRevision(rev))
	var outputs corev1.Secret
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "hello-outputs"}, &outputs))
	assert.Equal(t, sentinel, string(outputs.Data["message"]), "the operator's variable reached OpenTofu")
	logs := s.runnerLogs.String()
	assert.NotContains(t, logs, sentinel, "OpenTofu printed the value and the runner masked it")
	assert.Contains(t, logs, "(sensitive value)")
}
