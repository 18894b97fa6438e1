package e2e

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
)

// TestArtifactProxyServesEachRunOnlyItsOwnArtifact: runners fetch their
// artifact from the workspace-controller's proxy, never from the source
// server, and the proxy serves a token only what its Pod's run may have:
// no token, a token for another audience, a token bound to no Pod or to a
// Pod no Job controls are refused, and so is a Job of the Workspace that
// the controller did not create, whether it names another namespace's
// artifact or the Workspace's own (the proxy serves only the run the
// controller recorded; controllers/internal/artifactproxy tests each
// check).
func TestArtifactProxyServesEachRunOnlyItsOwnArtifact(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("hello", "infra", nil)
	ws := s.waitWorkspace("hello", 3*time.Minute, "applies through the proxy", appliedRevision(rev))

	// The runs' Jobs name the proxy and carry a token only in the runner container.
	var jobs batchv1.JobList
	require.NoError(t, env.Client.List(ctx, &jobs, client.InNamespace(s.ns), client.MatchingLabels{magosv1.WorkspaceLabel: "hello"}))
	require.NotEmpty(t, jobs.Items)
	own, err := fluxsource.Fetch(ctx, env.Client, ws)
	require.NoError(t, err)
	for _, j := range jobs.Items {
		c := j.Spec.Template.Spec.Containers[0]
		assert.Equal(t, "http://"+s.proxyAddr+magosv1.ArtifactProxyPath, envValue(c.Env, magosv1.EnvArtifactURL), "Job %s", j.Name)
		for _, e := range c.Env {
			assert.NotContains(t, e.Value, s.flux.StorageURL, "Job %s: %s names source-controller's storage", j.Name, e.Name)
		}
		assert.Equal(t, own.URL, j.Annotations[magosv1.ArtifactURLAnnotation])
		for _, ic := range j.Spec.Template.Spec.InitContainers {
			for _, m := range ic.VolumeMounts {
				assert.NotEqual(t, magosv1.ArtifactTokenDir, m.MountPath, "init container %s gets the artifact token", ic.Name)
			}
		}
	}

	// Another tenant's artifact, published by the same source server.
	other := env.NewNamespace(t)
	s.gitRepositoryIn(other, "secret-infra", copyConfig(t, "hello"))
	theirs, err := fluxsource.Fetch(ctx, env.Client, &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: other},
		Spec: magosv1.WorkspaceSpec{SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "secret-infra"}}})
	require.NoError(t, err)

	sa := magosv1.RunnerServiceAccountName("hello")
	// A Job of the Workspace that no controller started, naming the other
	// tenant's artifact, and a Pod it controls (suspended and on no node:
	// nothing runs them; only their tokens are used).
	forged := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "forged", Namespace: s.ns,
			Labels: map[string]string{magosv1.ManagedByLabel: magosv1.ManagedByValue, magosv1.WorkspaceLabel: "hello"},
			Annotations: map[string]string{
				magosv1.ArtifactURLAnnotation: theirs.URL, magosv1.ArtifactDigestAnnotation: theirs.Digest,
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: magosv1.GroupVersion.String(), Kind: magosv1.WorkspaceKind,
				Name: ws.Name, UID: ws.UID, Controller: ptr.To(true)}},
		},
		Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "none"}},
		}}},
	}
	require.NoError(t, env.Client.Create(ctx, forged))
	jobPod := bareRunnerPod(t, s.ns, "forged-pod", sa, forged)
	loosePod := bareRunnerPod(t, s.ns, "loose-pod", sa, nil)

	fetch := func(token string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.proxyAddr+magosv1.ArtifactProxyPath, nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, body
	}
	code, _ := fetch("")
	assert.Equal(t, http.StatusUnauthorized, code, "no token")
	code, _ = fetch(requestToken(t, s.ns, sa, "", nil))
	assert.Equal(t, http.StatusUnauthorized, code, "a token for the apiserver's audience")
	code, _ = fetch(requestToken(t, s.ns, sa, magosv1.ArtifactTokenAudience, nil))
	assert.Equal(t, http.StatusForbidden, code, "a token bound to no Pod")
	code, _ = fetch(requestToken(t, s.ns, sa, magosv1.ArtifactTokenAudience, loosePod))
	assert.Equal(t, http.StatusForbidden, code, "a token of a Pod no Job controls")
	// A Job the controller did not create is refused: 503 while it is new
	// and the Workspace's status may not record it yet, 403 once the
	// controller has adopted it (unvouched) or the wait is over.
	refused := []int{http.StatusForbidden, http.StatusServiceUnavailable}
	forgedToken := requestToken(t, s.ns, sa, magosv1.ArtifactTokenAudience, jobPod)
	code, body := fetch(forgedToken)
	assert.Contains(t, refused, code, "another namespace's artifact: %s", body)

	// The same Job naming its Workspace's own artifact: refused all the same.
	patch := client.MergeFrom(forged.DeepCopy())
	forged.Annotations[magosv1.ArtifactURLAnnotation], forged.Annotations[magosv1.ArtifactDigestAnnotation] = own.URL, own.Digest
	require.NoError(t, env.Client.Patch(ctx, forged, patch))
	code, body = fetch(forgedToken)
	assert.Contains(t, refused, code, "its own artifact, from a Job the controller did not create: %s", body)

	// A finished run's Pod is refused.
	jobPod.Status.Phase = corev1.PodSucceeded
	require.NoError(t, env.Client.Status().Update(ctx, jobPod))
	code, _ = fetch(forgedToken)
	assert.Equal(t, http.StatusForbidden, code, "a finished Pod")
}

// bareRunnerPod creates a Pod running as ServiceAccount sa on no node,
// controlled by job when job is not nil.
func bareRunnerPod(t *testing.T, ns, name, sa string, job *batchv1.Job) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{ServiceAccountName: sa, RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "none"}}},
	}
	if job != nil {
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: ptr.To(true)}}
	}
	require.NoError(t, env.Client.Create(context.Background(), pod))
	return pod
}

// requestToken mints a token of ServiceAccount ns/sa for audience ("" for
// the apiserver's), bound to pod when it is not nil.
func requestToken(t *testing.T, ns, sa, audience string, pod *corev1.Pod) string {
	t.Helper()
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}
	if audience != "" {
		tr.Spec.Audiences = []string{audience}
	}
	if pod != nil {
		tr.Spec.BoundObjectRef = &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}
	}
	require.NoError(t, env.Client.SubResource("token").Create(context.Background(),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}}, tr))
	require.NotEmpty(t, strings.TrimSpace(tr.Status.Token))
	return tr.Status.Token
}

// envValue is the value of the entry name in env, empty if there is none.
func envValue(env []corev1.EnvVar, name string) string {
	for _, e := range env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}
