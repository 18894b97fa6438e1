package artifactproxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/artifacthost"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
	"github.com/magos-dev/magos/tools/harness/localsource"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// The tests of this package that need the apiserver (TokenReview, the
// Pods, Jobs and Workspaces a token leads to) run the proxy in-process
// against the local control plane, with Flux's artifacts served by a
// stand-in for source-controller's file server (localsource), which lists
// directories as source-controller's does.

var env *testenv.Environment

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// fixture is one test's namespace, a source server and the proxy.
type fixture struct {
	t      *testing.T
	ns     string
	source *localsource.Server
	server *Server
}

// newFixture starts a source server and the proxy for a new namespace;
// without the environment (-short) the test is skipped.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, ns: env.NewNamespace(t)}
	src, err := localsource.New(env.Client, localsource.Options{CreateMissing: true})
	require.NoError(t, err)
	require.NoError(t, src.Start())
	t.Cleanup(func() { _ = src.Close() })
	f.source = src
	f.server = newServer(t)
	return f
}

// newServer is the proxy as the workspace-controller runs it, with the
// chart's guards and the test's source server as its only artifact host.
func newServer(t *testing.T) *Server {
	return &Server{Client: env.Client, Reader: env.Client, Log: testr.New(t), MaxBytes: 1 << 20,
		Guards: config.Guards{NoCrossNamespaceRefs: true}, Hosts: artifacthost.Hosts{"127.0.0.1"}}
}

// publish makes data the artifact of GitRepository ns/name and returns it.
func (f *fixture) publish(ns, name string, data []byte) fluxsource.Artifact {
	f.t.Helper()
	a, err := f.source.PublishArtifact(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, data, localsource.ArtifactOptions{})
	require.NoError(f.t, err)
	return fluxsource.Artifact{URL: a.URL, Revision: a.Revision, Digest: a.Digest}
}

// newWorkspace creates Workspace name reading GitRepository ns/source
// (ns "" for its own namespace); mutate, if set, adjusts it first.
func (f *fixture) newWorkspace(name, ns, source string, mutate func(*magosv1.Workspace)) *magosv1.Workspace {
	f.t.Helper()
	ws := &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec:       magosv1.WorkspaceSpec{SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: source, Namespace: ns}},
	}
	if mutate != nil {
		mutate(ws)
	}
	require.NoError(f.t, env.Client.Create(context.Background(), ws))
	for _, sa := range []string{magosv1.RunnerServiceAccountName(name), magosv1.PlanRunnerServiceAccountName(name)} {
		require.NoError(f.t, env.Client.Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: sa}}))
	}
	return ws
}

// newJob creates a Job of ws as the workspace-controller builds one: its
// labels, the run annotations naming art, ws as its controller and the
// runner ServiceAccount of phase; suspended (nothing runs it). Anyone who
// may create Jobs in the namespace can create the same.
func (f *fixture) newJob(ws *magosv1.Workspace, name, phase string, art fluxsource.Artifact) *batchv1.Job {
	f.t.Helper()
	sa := magosv1.RunnerServiceAccountName(ws.Name)
	if phase == magosv1.RunPlan {
		sa = magosv1.PlanRunnerServiceAccountName(ws.Name)
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns,
			Labels:      map[string]string{magosv1.ManagedByLabel: magosv1.ManagedByValue, magosv1.WorkspaceLabel: ws.Name, magosv1.PhaseLabel: phase},
			Annotations: magosv1.RunAnnotations{Revision: art.Revision, ArtifactURL: art.URL, ArtifactDigest: art.Digest, Number: 1}.Annotations(),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: magosv1.GroupVersion.String(), Kind: magosv1.WorkspaceKind,
				Name: ws.Name, UID: ws.UID, Controller: ptr.To(true)}},
		},
		Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			ServiceAccountName: sa, RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "runner", Image: "none"}},
		}}},
	}
	require.NoError(f.t, env.Client.Create(context.Background(), job))
	return job
}

// record writes job into ws's status as the run in progress, as the
// workspace-controller does when it has created job: its name and UID, and
// the artifact the run was started on.
func (f *fixture) record(ws *magosv1.Workspace, job *batchv1.Job, edit func(*magosv1.RunStatus)) {
	f.t.Helper()
	a := magosv1.ParseRunAnnotations(job.Annotations)
	now := metav1.Now()
	cr := &magosv1.RunStatus{Job: job.Name, JobUID: job.UID, Phase: job.Labels[magosv1.PhaseLabel], Result: magosv1.ResultRunning,
		Revision: a.Revision, ArtifactURL: a.ArtifactURL, ArtifactDigest: a.ArtifactDigest, Started: &now}
	if edit != nil {
		edit(cr)
	}
	require.NoError(f.t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: ws.Namespace, Name: ws.Name}, ws))
	ws.Status.CurrentRun = cr
	require.NoError(f.t, env.Client.Status().Update(context.Background(), ws))
}

// newPod creates a Pod of job's ServiceAccount (sa when set) that job
// controls, on no node (nothing runs it), and returns a token for the
// proxy's audience bound to it, as the kubelet mounts one in the runner.
func (f *fixture) newPod(job *batchv1.Job, sa string) string {
	f.t.Helper()
	if sa == "" {
		sa = job.Spec.Template.Spec.ServiceAccountName
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: job.Name + "-", Namespace: f.ns,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{ServiceAccountName: sa, RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "runner", Image: "none"}}},
	}
	require.NoError(f.t, env.Client.Create(context.Background(), pod))
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences: []string{magosv1.ArtifactTokenAudience}, ExpirationSeconds: ptr.To[int64](600),
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	require.NoError(f.t, env.Client.SubResource("token").Create(context.Background(),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: sa}}, tr))
	require.NotEmpty(f.t, strings.TrimSpace(tr.Status.Token))
	return tr.Status.Token
}

// fetch asks the fixture's proxy for the artifact of token's run.
func (f *fixture) fetch(token string) (int, []byte) {
	f.t.Helper()
	return f.fetchFrom(f.server, token)
}

// fetchFrom asks proxy s for the artifact of token's run.
func (f *fixture) fetchFrom(s *Server, token string) (int, []byte) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, magosv1.ArtifactProxyPath, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// sha256Digest is "sha256:<hex>" of b.
func sha256Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// later is the proxy as newServer makes it, whose clock runs past the wait
// for a new Job's record.
func later(t *testing.T) *Server {
	s := newServer(t)
	s.Now = func() time.Time { return time.Now().Add(2 * recordWait) }
	return s
}
