package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/tools/harness/executor"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

var (
	env *testenv.Environment
	// probe is the test program the Jobs run (testdata/probe).
	probe string
)

const timeout = 30 * time.Second

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "executor-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	probe = filepath.Join(dir, "probe")
	build := exec.Command("go", "build", "-o", probe, "./testdata/probe")
	build.Env = append(os.Environ(), "GOWORK=off") // the harness module builds on its own
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the probe: %v\n%s", err, out)
		os.Exit(1)
	}
	code := testenv.Run(m, &env)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// startExecutor runs an executor for one namespace until the test ends.
func startExecutor(t *testing.T, ns string, mutate ...func(*executor.Options)) *executor.Executor {
	t.Helper()
	opts := executor.Options{
		RunnerPath:          probe,
		LogDir:              t.TempDir(),
		Namespace:           ns,
		ConfigErrorInterval: 200 * time.Millisecond,
		Env:                 map[string]string{"MAGOS_VERSIONS_DIR": "/local/versions"},
		LogOutput:           testWriter{t},
	}
	for _, m := range mutate {
		m(&opts)
	}
	ex, err := executor.New(env.Config, opts)
	require.NoError(t, err)
	stop := runExecutor(t, ex)
	t.Cleanup(stop)
	return ex
}

// runExecutor starts ex; the returned function stops it and waits until
// its processes are gone.
func runExecutor(t *testing.T, ex *executor.Executor) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ex.Start(ctx) }()
	return func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(timeout):
			t.Error("the executor did not stop")
		}
	}
}

// testWriter sends the processes' output to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// fixture is a namespace with a ServiceAccount allowed to get one
// ConfigMap ("allowed") but not another ("forbidden"), and a Secret.
type fixture struct {
	ns, sa string
	record string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	ctx := context.Background()
	ns := env.NewNamespace(t)
	f := fixture{ns: ns, sa: "runner", record: filepath.Join(t.TempDir(), "record")}
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: f.sa}},
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "runner"},
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"allowed"}, Verbs: []string{"get"},
			}},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "runner"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "runner"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: f.sa, Namespace: ns}},
		},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "allowed"}, Data: map[string]string{"value": "allowed-value"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "forbidden"}, Data: map[string]string{"value": "forbidden-value"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"}, Data: map[string][]byte{"token": []byte("s3cr3t")}},
	}
	for _, o := range objs {
		require.NoError(t, env.Client.Create(ctx, o))
	}
	return f
}

// job is a Magos-like Job running the probe in mode.
func (f fixture) job(name, mode string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: f.ns, Name: name,
			Labels: map[string]string{magosv1.WorkspaceLabel: "demo", magosv1.PhaseLabel: magosv1.RunPlan},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit: new(int32(0)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{magosv1.WorkspaceLabel: "demo"}},
				Spec: corev1.PodSpec{
					RestartPolicy:                 corev1.RestartPolicyNever,
					ServiceAccountName:            f.sa,
					TerminationGracePeriodSeconds: new(int64(2)),
					Containers: []corev1.Container{{
						Name:    "runner",
						Image:   "ghcr.io/magos-dev/runner:dev",
						Command: []string{"/runner"},
						Args:    []string{mode},
						Env: []corev1.EnvVar{
							{Name: "PROBE_RECORD", Value: f.record},
							{Name: "PROBE_ALLOWED", Value: "allowed"},
							{Name: "PROBE_FORBIDDEN", Value: "forbidden"},
							{Name: "PROBE_SECRET", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
								LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "token",
							}}},
							{Name: "PROBE_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
							{Name: "PROBE_POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
							{Name: "PROBE_SA", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.serviceAccountName"}}},
							{Name: "PROBE_EXPANDED", Value: "$(PROBE_ALLOWED)-and-$(FROM_CM_value)"},
							{Name: "MAGOS_VERSIONS_DIR", Value: "/opt/magos/versions"},
						},
						EnvFrom: []corev1.EnvFromSource{{
							Prefix:       "FROM_CM_",
							ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "allowed"}},
						}},
					}},
				},
			},
		},
	}
}

// create creates a Job.
func create(t *testing.T, job *batchv1.Job) types.NamespacedName {
	t.Helper()
	require.NoError(t, env.Client.Create(context.Background(), job))
	return client.ObjectKeyFromObject(job)
}

// waitJob waits until the Job has condition t set to True.
func waitJob(t *testing.T, key types.NamespacedName, ct batchv1.JobConditionType) *batchv1.Job {
	t.Helper()
	job := &batchv1.Job{}
	require.Eventually(t, func() bool {
		if err := env.Client.Get(context.Background(), key, job); err != nil {
			return false
		}
		for _, c := range job.Status.Conditions {
			if c.Type == ct && c.Status == corev1.ConditionTrue {
				return true
			}
		}
		return false
	}, timeout, 100*time.Millisecond, "Job %s never got condition %s", key, ct)
	return job
}

// jobCondition returns a Job's condition of type ct.
func jobCondition(job *batchv1.Job, ct batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range job.Status.Conditions {
		if job.Status.Conditions[i].Type == ct {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}

// waitPod waits until the Job has exactly one Pod that satisfies ok.
func waitPod(t *testing.T, key types.NamespacedName, ok func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	require.Eventually(t, func() bool {
		pods := jobPods(t, key)
		if len(pods) != 1 {
			return false
		}
		pod = &pods[0]
		return ok(pod)
	}, timeout, 100*time.Millisecond, "Job %s has no Pod in the expected state", key)
	return pod
}

// jobPods lists the Pods labelled with the Job's name.
func jobPods(t *testing.T, key types.NamespacedName) []corev1.Pod {
	t.Helper()
	list := &corev1.PodList{}
	require.NoError(t, env.Client.List(context.Background(), list, client.InNamespace(key.Namespace),
		client.MatchingLabels{batchv1.JobNameLabel: key.Name}))
	return list.Items
}

func phase(p corev1.PodPhase) func(*corev1.Pod) bool {
	return func(pod *corev1.Pod) bool { return pod.Status.Phase == p }
}

// report decodes the probe's termination message.
func report(t *testing.T, pod *corev1.Pod) probeReport {
	t.Helper()
	require.Len(t, pod.Status.ContainerStatuses, 1)
	term := pod.Status.ContainerStatuses[0].State.Terminated
	require.NotNil(t, term, "container not terminated")
	var rep probeReport
	require.NoError(t, json.Unmarshal([]byte(term.Message), &rep), "termination message %q", term.Message)
	return rep
}

// probeReport mirrors testdata/probe's Report.
type probeReport struct {
	Args      []string          `json:"args"`
	Env       map[string]string `json:"env"`
	User      string            `json:"user"`
	Groups    []string          `json:"groups"`
	Allowed   string            `json:"allowed"`
	Forbidden string            `json:"forbidden"`
	WorkDir   bool              `json:"workDirWritable"`
	File      string            `json:"file"`
}

// waitStarted waits until the probe recorded that it started, and so
// handles SIGTERM: a Pod is Running as soon as its process is, before the
// probe has got that far.
func waitStarted(t *testing.T, path string) {
	t.Helper()
	require.Eventually(t, func() bool { return slices.Contains(records(t, path), "started") },
		timeout, 50*time.Millisecond, "the probe never started")
}

// records reads the lines the probe recorded.
func records(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Fields(string(data))
}
