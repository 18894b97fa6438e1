package realnode

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
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

// TestArtifactProxyOnTheNode: with the chart's defaults, team-a's runs
// fetch their artifact from the workspace-controller's proxy (the kubelet
// projects the Pod-bound token) and apply; a Pod of team-a presenting its
// own Pod-bound token gets nothing through a Job it forged: not team-b's
// artifact, and not even its own Workspace's, which the proxy serves only
// to the run the workspace-controller recorded (the Job's name and UID in
// status.currentRun).
func TestArtifactProxyOnTheNode(t *testing.T) {
	ctx := context.Background()
	requireSourceController(t)
	teamA, teamB := newNamespace(t), newNamespace(t)
	content := t.TempDir()
	mainTF, err := os.ReadFile("../testdata/release/main.tf")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(content, "main.tf"), mainTF, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(content, "release.txt"), []byte("team\n"), 0o644))
	revA := newGitSource(t, teamA).Publish(ctx, "infra", content)
	newGitSource(t, teamB).Publish(ctx, "secret-infra", content)

	ws := &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "release", Namespace: teamA},
		Spec: magosv1.WorkspaceSpec{
			SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"},
			Outputs:   &magosv1.OutputsSpec{SecretName: "release-outputs"},
		},
	}
	require.NoError(t, k8s.Create(ctx, ws))
	ws = waitWorkspace(t, teamA, "release", 5*time.Minute, "applies through the artifact proxy", applied(revA))

	var svc corev1.Service
	require.NoError(t, k8s.Get(ctx, client.ObjectKey{Namespace: magosNamespace, Name: "magos-workspace-controller-artifacts"}, &svc))
	proxyURL := "http://" + svc.Spec.ClusterIP + ":9443" + magosv1.ArtifactProxyPath
	var jobs batchv1.JobList
	require.NoError(t, k8s.List(ctx, &jobs, client.InNamespace(teamA), client.MatchingLabels{magosv1.WorkspaceLabel: "release"}))
	require.NotEmpty(t, jobs.Items)
	for _, j := range jobs.Items {
		for _, e := range j.Spec.Template.Spec.Containers[0].Env {
			if e.Name == magosv1.EnvArtifactURL {
				assert.Equal(t, proxyURL, e.Value, "Job %s fetches from the proxy's Service", j.Name)
			}
		}
	}

	own, err := fluxsource.Fetch(ctx, k8s, ws)
	require.NoError(t, err)
	theirs, err := fluxsource.Fetch(ctx, k8s, &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: teamB},
		Spec: magosv1.WorkspaceSpec{SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "secret-infra"}}})
	require.NoError(t, err)

	// A Job of team-a's Workspace no controller started, naming team-b's
	// artifact, and a Pod it controls bound to a node that does not exist
	// (it never runs; only its token is used).
	forged := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "forged", Namespace: teamA,
			Labels:      map[string]string{magosv1.ManagedByLabel: magosv1.ManagedByValue, magosv1.WorkspaceLabel: ws.Name},
			Annotations: map[string]string{magosv1.ArtifactURLAnnotation: theirs.URL, magosv1.ArtifactDigestAnnotation: theirs.Digest},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: magosv1.GroupVersion.String(), Kind: magosv1.WorkspaceKind,
				Name: ws.Name, UID: ws.UID, Controller: ptr.To(true)}},
		},
		Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "magos.test/none"}},
		}}},
	}
	require.NoError(t, k8s.Create(ctx, forged))
	sa := magosv1.RunnerServiceAccountName(ws.Name)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "forged-pod", Namespace: teamA,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: forged.Name, UID: forged.UID, Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{ServiceAccountName: sa, NodeName: "nowhere", RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "magos.test/none"}}},
	}
	require.NoError(t, k8s.Create(ctx, pod))
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences: []string{magosv1.ArtifactTokenAudience}, ExpirationSeconds: ptr.To[int64](600),
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	require.NoError(t, k8s.SubResource("token").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: teamA, Name: sa}}, tr))

	// Requests from inside the node's network, to the proxy on the
	// controller's Pod (the node's own network has no route to Service
	// addresses; the runner Pods above used the Service).
	var pods corev1.PodList
	require.NoError(t, k8s.List(ctx, &pods, client.InNamespace(magosNamespace), client.MatchingLabels{"app.kubernetes.io/name": "workspace-controller"}))
	require.NotEmpty(t, pods.Items)
	podURL := "http://" + pods.Items[0].Status.PodIP + ":9443" + magosv1.ArtifactProxyPath
	httpc := &http.Client{Transport: &http.Transport{DialContext: node.DialContext}, Timeout: time.Minute}
	fetch := func(token string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, podURL, nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := httpc.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, body
	}
	code, _ := fetch("")
	assert.Equal(t, http.StatusUnauthorized, code, "no token")
	code, body := fetch(tr.Status.Token)
	assert.Equal(t, http.StatusForbidden, code, "team-b's artifact: %s", body)

	patch := client.MergeFrom(forged.DeepCopy())
	forged.Annotations[magosv1.ArtifactURLAnnotation], forged.Annotations[magosv1.ArtifactDigestAnnotation] = own.URL, own.Digest
	require.NoError(t, k8s.Patch(ctx, forged, patch))
	code, body = fetch(tr.Status.Token)
	assert.Equal(t, http.StatusForbidden, code, "its own artifact through a Job no controller recorded: %s", body)
}
