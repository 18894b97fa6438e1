package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
)

func TestWorkspaceSentinelSecretNeverLeaks(t *testing.T) {
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
	ws := s.waitWorkspace("secretive", 3*time.Minute, "applies with the secret input", appliedRevision(rev))

	// The secret reached OpenTofu: the sensitive output is its digest.
	var outputs corev1.Secret
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "secretive-outputs"}, &outputs))
	assert.Equal(t, fmt.Sprintf("%x", sha256Sum(sentinel)), string(outputs.Data["secret_digest"]))

	places := map[string]string{
		"runner output":          s.runnerLogs.String(),
		"controller logs":        controllerLogs.String(),
		"Workspace":              mustJSON(t, ws),
		"metrics":                gatherMetrics(t),
		"Jobs":                   listJSON(t, &batchv1.JobList{}, s.ns),
		"Pods":                   listJSON(t, &corev1.PodList{}, s.ns),
		"events (core)":          listJSON(t, &corev1.EventList{}, s.ns),
		"events (events.k8s.io)": listJSON(t, &eventsv1.EventList{}, s.ns),
	}
	require.NotEmpty(t, places["runner output"], "the runner's output was captured")
	for where, text := range places {
		assert.NotContains(t, text, sentinel, "the sentinel secret leaked into %s", where)
	}
}

func TestRunnerCannotReadAnotherWorkspacesState(t *testing.T) {
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
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: fmt.Sprintf("system:serviceaccount:%s:%s", s.ns, magosv1.RunnerServiceAccountName(name)),
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + s.ns, "system:authenticated"},
	}
	c, err := client.New(cfg, client.Options{Scheme: setup.Scheme()})
	require.NoError(s.t, err)
	return c
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
