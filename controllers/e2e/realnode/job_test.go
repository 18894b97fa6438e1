package realnode

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magos-dev/magos/tools/harness/realnode"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// probeReport is what testdata/probe writes to its termination message.
type probeReport struct {
	UID          int    `json:"uid"`
	GID          int    `json:"gid"`
	RootWrite    string `json:"rootWrite"`
	ScratchWrite string `json:"scratchWrite"`
	Service      string `json:"service"`
	URL          string `json:"url"`
}

// TestHardenedJobRunsAndIsCleanedUp runs a plain Job from an imported
// image in a non-root Pod with a read-only root filesystem: the real job
// controller completes it, the runtime enforces the security context, the
// Pod reaches the kubernetes Service (kube-proxy) and a server of the test
// on the node address, the TTL controller deletes the Job and the garbage
// collector its Pod.
func TestHardenedJobRunsAndIsCleanedUp(t *testing.T) {
	requireNode(t)
	ctx := context.Background()
	ns := newNamespace(t)
	l, err := node.Listen("tcp", net.JoinHostPort(realnode.NodeIP, "0"))
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("served on the node")) }),
		ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			// Long enough for the test to read the finished Pod before the
			// TTL controller deletes the Job and the garbage collector its
			// Pod: with 1 s, a loaded machine saw the Job finished only
			// after its Pod was gone.
			TTLSecondsAfterFinished: ptr.To[int32](5),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy:                corev1.RestartPolicyNever,
				AutomountServiceAccountToken: ptr.To(false),
				SecurityContext: &corev1.PodSecurityContext{
					RunAsNonRoot:   ptr.To(true),
					RunAsUser:      ptr.To[int64](65532),
					RunAsGroup:     ptr.To[int64](65532),
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
				Containers: []corev1.Container{{
					Name:            "probe",
					Image:           probeImage,
					ImagePullPolicy: corev1.PullNever,
					SecurityContext: &corev1.SecurityContext{
						ReadOnlyRootFilesystem:   ptr.To(true),
						AllowPrivilegeEscalation: ptr.To(false),
						Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					},
					VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}},
					Env:          []corev1.EnvVar{{Name: "PROBE_URL", Value: "http://" + l.Addr().String()}},
				}},
				Volumes: []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			}},
		},
	}
	created := time.Now()
	require.NoError(t, k8s.Create(ctx, job))

	testenv.WaitFor(t, k8s, client.ObjectKeyFromObject(job), job, 2*time.Minute, 100*time.Millisecond, func(j *batchv1.Job) bool {
		return j.Status.Succeeded == 1 || j.Status.Failed > 0
	}, "the Job did not finish")
	t.Logf("Job completed %s after creation", time.Since(created).Round(time.Millisecond))
	require.EqualValues(t, 1, job.Status.Succeeded, "the Job failed: %+v", job.Status)

	var pods corev1.PodList
	require.NoError(t, k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"batch.kubernetes.io/job-name": "probe"}))
	require.Len(t, pods.Items, 1)
	pod := pods.Items[0]
	require.Len(t, pod.Status.ContainerStatuses, 1)
	term := pod.Status.ContainerStatuses[0].State.Terminated
	require.NotNil(t, term, "the probe container has not terminated")
	var report probeReport
	require.NoError(t, json.Unmarshal([]byte(term.Message), &report), "termination message %q", term.Message)
	assert.Equal(t, 65532, report.UID, "the container runs as the Pod's user")
	assert.Equal(t, 65532, report.GID, "the container runs as the Pod's group")
	assert.Contains(t, report.RootWrite, "read-only file system", "the root filesystem is read-only")
	assert.Equal(t, "ok", report.ScratchWrite, "the emptyDir is writable")
	assert.Equal(t, "ok", report.Service, "the Pod reaches the kubernetes Service through kube-proxy")
	assert.Equal(t, "served on the node", report.URL, "the Pod reaches a server on the node address")

	finished := time.Now()
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(job), &batchv1.Job{}))
	}, time.Minute, 100*time.Millisecond, "the TTL controller did not delete the finished Job")
	t.Logf("TTL controller deleted the Job %s after it finished", time.Since(finished).Round(time.Millisecond))
	deleted := time.Now()
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(&pod), &corev1.Pod{}))
	}, time.Minute, 100*time.Millisecond, "the garbage collector did not delete the Job's Pod")
	t.Logf("garbage collector deleted the Pod %s after the Job", time.Since(deleted).Round(time.Millisecond))
}
