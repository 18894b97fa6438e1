package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/setup"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
)

func TestWorkspaceSentinelSecretNeverLeaks(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	sentinel := "sentinel-" + rand.String(16)
	require.NoError(t, env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: s.ns},
		StringData: map[string]string{"word": sentinel},
	}))
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("secretive", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.Vars = []magosv1.Variable{{Name: "secret_word", ValueFrom: &magosv1.VariableSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "word"},
		}}}
	})
	s.waitWorkspace("secretive", 3*time.Minute, "applies with the secret input", appliedRevision(rev))

	// The secret reached OpenTofu: the sensitive output is its digest.
	var outputs corev1.Secret
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "secretive-outputs"}, &outputs))
	assert.Equal(t, fmt.Sprintf("%x", sha256Sum(sentinel)), string(outputs.Data["secret_digest"]))

	require.NotEmpty(t, s.runnerLogs.String(), "the runner's output was captured")
	assertNowhere(t, s, sentinel)
}

func TestRunnerCannotReadAnotherWorkspacesState(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("alpha", "infra", nil)
	s.newWorkspace("beta", "infra", nil)
	s.waitWorkspace("alpha", 3*time.Minute, "applies", appliedRevision(rev))
	s.waitWorkspace("beta", 3*time.Minute, "applies", appliedRevision(rev))

	alpha := s.runnerClient("alpha")

	var secret corev1.Secret
	require.NoError(t, alpha.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: magosv1.StateSecretName("alpha")}, &secret),
		"a runner reads its own state")
	err := alpha.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: magosv1.StateSecretName("beta")}, &secret)
	assert.True(t, apierrors.IsForbidden(err), "reading another Workspace's state must be Forbidden, got %v", err)
	err = alpha.List(ctx, &corev1.SecretList{}, client.InNamespace(s.ns))
	assert.True(t, apierrors.IsForbidden(err), "listing Secrets must be Forbidden, got %v", err)
	err = alpha.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "beta-outputs"}, &secret)
	assert.True(t, apierrors.IsForbidden(err), "reading another Workspace's outputs must be Forbidden, got %v", err)
}

// runnerClient is a client acting as the runner of Workspace name: it
// impersonates the runner's ServiceAccount, so RBAC is really enforced.
func (s *stack) runnerClient(name string) client.Client {
	s.t.Helper()
	return impersonate(s.t, s.ns, magosv1.RunnerServiceAccountName(name))
}

// placesNoSecretReaches are the texts a user or another tenant may read
// about the runs of namespace ns, by where they are: runner output,
// controller logs, the Magos objects, metrics, the Jobs, Pods and events
// (both APIs).
func (s *stack) placesNoSecretReaches(t *testing.T) map[string]string {
	t.Helper()
	return map[string]string{
		"runner output":          s.runnerLogs.String(),
		"controller logs":        controllerLogs.String(),
		"Magos objects":          listJSON(t, &magosv1.WorkspaceList{}, s.ns) + listJSON(t, &magosv1.VariableSetList{}, s.ns) + listJSON(t, &magosv1.ProjectList{}, s.ns),
		"metrics":                gatherMetrics(t),
		"Jobs":                   listJSON(t, &batchv1.JobList{}, s.ns),
		"Pods":                   listJSON(t, &corev1.PodList{}, s.ns),
		"events (core)":          listJSON(t, &corev1.EventList{}, s.ns),
		"events (events.k8s.io)": listJSON(t, &eventsv1.EventList{}, s.ns),
	}
}

// assertNowhere checks that secret appears in none of the
// placesNoSecretReaches.
func assertNowhere(t *testing.T, s *stack, secret string) {
	t.Helper()
	for where, text := range s.placesNoSecretReaches(t) {
		assert.NotContains(t, text, secret, "a secret value leaked into %s", where)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func listJSON(t *testing.T, list client.ObjectList, ns string) string {
	t.Helper()
	require.NoError(t, env.Client.List(context.Background(), list, client.InNamespace(ns)))
	return mustJSON(t, list)
}

func gatherMetrics(t *testing.T) string {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	require.NoError(t, err)
	var buf bytes.Buffer
	for _, f := range families {
		_, err := expfmt.MetricFamilyToText(&buf, f)
		require.NoError(t, err)
	}
	return buf.String()
}

// impersonate is a client acting as ServiceAccount sa of namespace ns.
func impersonate(t testing.TB, ns, sa string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: fmt.Sprintf("system:serviceaccount:%s:%s", ns, sa),
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
	}
	c, err := client.New(cfg, client.Options{Scheme: setup.Scheme()})
	require.NoError(t, err)
	return c
}

// Plans run config code before any gate or approval, so they run as their
// own identity: another cloud identity (annotations) and a Role that can
// read the state and take the lock but not write the state or outputs.
// (Here every plan is gated, as with --always-separate-plan-identity; on
// the fast path nothing decides on a plan, and the apply identity runs it.)
func TestPlanRunsAsReadOnlyIdentity(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStackWith(t, stackOptions{Workspace: func(o *config.Options) { o.Guards.AlwaysSeparatePlanIdentity = true }})
	dir := copyConfig(t, "hello")
	rev := s.gitRepository("infra", dir)
	const role = "eks.amazonaws.com/role-arn"
	s.newWorkspace("split", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.Runner = &magosv1.RunnerSpec{
			ServiceAccountAnnotations: map[string]string{role: "arn:aws:iam::111122223333:role/deployer"},
			Plan:                      &magosv1.PlanRunnerSpec{ServiceAccountAnnotations: map[string]string{role: "arn:aws:iam::111122223333:role/reader"}},
		}
	})
	s.waitWorkspace("split", 3*time.Minute, "applies", appliedRevision(rev))

	// A second revision is planned as the plan identity with state to read.
	mainTF := filepath.Join(dir, "main.tf")
	require.NoError(t, os.WriteFile(mainTF, []byte(strings.Replace(readFile(t, mainTF), `default = "hello"`, `default = "hello, reader"`, 1)), 0o644))
	rev = s.publish("infra", dir)
	// The plan identity exists while its plan runs (it is deleted once the
	// plan's result is read): its cloud identity is the plan's.
	var planSA corev1.ServiceAccount
	require.Eventually(t, func() bool {
		return env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: magosv1.PlanRunnerServiceAccountName("split")}, &planSA) == nil
	}, 3*time.Minute, 50*time.Millisecond, "the second plan runs as the plan identity")
	assert.Equal(t, "arn:aws:iam::111122223333:role/reader", planSA.Annotations[role], "the annotations of the plan identity")
	s.waitWorkspace("split", 3*time.Minute, "applies the second revision", appliedRevision(rev))

	var jobs batchv1.JobList
	require.NoError(t, env.Client.List(ctx, &jobs, client.InNamespace(s.ns), client.MatchingLabels{magosv1.WorkspaceLabel: "split"}))
	require.Len(t, jobs.Items, 4, "two plans and two applies")
	for _, j := range jobs.Items {
		want := magosv1.RunnerServiceAccountName("split")
		if j.Labels[magosv1.PhaseLabel] == magosv1.RunPlan {
			want = magosv1.PlanRunnerServiceAccountName("split")
		}
		assert.Equal(t, want, j.Spec.Template.Spec.ServiceAccountName, "Job %s", j.Name)
	}
	var applySA corev1.ServiceAccount
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: magosv1.RunnerServiceAccountName("split")}, &applySA))
	assert.Equal(t, "arn:aws:iam::111122223333:role/deployer", applySA.Annotations[role], "the annotations of the apply identity")

	planner := impersonate(t, s.ns, magosv1.PlanRunnerServiceAccountName("split"))
	var state corev1.Secret
	require.NoError(t, planner.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: magosv1.StateSecretName("split")}, &state),
		"a plan reads the state")
	state.Data[magosv1.StateKey] = []byte("tampered")
	err := planner.Update(ctx, &state)
	assert.True(t, apierrors.IsForbidden(err), "a plan must not write the state, got %v", err)
	err = planner.Delete(ctx, &state)
	assert.True(t, apierrors.IsForbidden(err), "a plan must not delete the state, got %v", err)
	var outputs corev1.Secret
	err = planner.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "split-outputs"}, &outputs)
	assert.True(t, apierrors.IsForbidden(err), "a plan must not touch the outputs, got %v", err)
	var errored corev1.Secret
	err = planner.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: magosv1.ErroredStateSecretName("split")}, &errored)
	assert.True(t, apierrors.IsForbidden(err), "a plan must not touch the errored state, got %v", err)

	applier := impersonate(t, s.ns, magosv1.RunnerServiceAccountName("split"))
	require.NoError(t, applier.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: magosv1.StateSecretName("split")}, &state))
	require.NoError(t, applier.Update(ctx, &state), "the apply identity writes the state")
	require.NoError(t, applier.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: magosv1.ErroredStateSecretName("split")}, &errored))
	require.NoError(t, applier.Update(ctx, &errored), "the apply identity saves errored state")
}
