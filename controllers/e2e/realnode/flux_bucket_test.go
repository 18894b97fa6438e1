package realnode

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
	"github.com/magos-dev/magos/tools/harness/realnode"
	"github.com/magos-dev/magos/tools/harness/s3server"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// TestBucketDeliversToWorkspace: configurations in an S3-compatible
// object store on the node's network (gofakes3, in memory) are fetched by
// source-controller through a Bucket (provider generic), and a Workspace
// reading the Bucket applies them; new objects give a new artifact, which
// the Workspace applies.
func TestBucketDeliversToWorkspace(t *testing.T) {
	ctx := context.Background()
	requireSourceController(t)
	ns := newNamespace(t)
	logSourceControllerOnFailure(t, ns)
	l, err := node.Listen("tcp", realnode.NodeIP+":0")
	require.NoError(t, err)
	store := s3server.Serve(l)
	t.Cleanup(func() { _ = store.Close() })
	content := t.TempDir()
	writeRelease(t, content, "bucket-v1")
	require.NoError(t, store.Sync("infra", content))

	bucket := &unstructured.Unstructured{}
	bucket.SetGroupVersionKind(fluxsource.GroupVersion.WithKind("Bucket"))
	bucket.SetNamespace(ns)
	bucket.SetName("infra")
	require.NoError(t, unstructured.SetNestedMap(bucket.Object, map[string]any{
		"provider": "generic", "bucketName": "infra", "endpoint": l.Addr().String(), "insecure": true, "interval": "1m",
	}, "spec"))
	require.NoError(t, k8s.Create(ctx, bucket))
	artifact := func(not string) string {
		testenv.WaitFor(t, k8s, client.ObjectKeyFromObject(bucket), bucket, 2*time.Minute, 200*time.Millisecond, func(u *unstructured.Unstructured) bool {
			observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
			rev := fluxsource.ReadArtifact(u).Revision
			return observed == u.GetGeneration() && rev != "" && rev != not
		}, "source-controller fetched no new artifact of the Bucket: status "+fmt.Sprint(bucket.Object["status"]))
		return fluxsource.ReadArtifact(bucket).Revision
	}
	first := artifact("")

	require.NoError(t, k8s.Create(ctx, &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "release", Namespace: ns},
		Spec: magosv1.WorkspaceSpec{
			SourceRef: magosv1.SourceReference{Kind: "Bucket", Name: "infra"},
			Outputs:   &magosv1.OutputsSpec{SecretName: "release-outputs"},
		},
	}))
	waitWorkspace(t, ns, "release", 5*time.Minute, "applies the Bucket's objects", applied(first))
	assertOutput(t, ns, "release-outputs", "release", ":bucket-v1")

	writeRelease(t, content, "bucket-v2")
	require.NoError(t, store.Sync("infra", content))
	requestReconcile(t, bucket)
	second := artifact(first)
	waitWorkspace(t, ns, "release", 5*time.Minute, "applies the new objects", applied(second))
	assertOutput(t, ns, "release-outputs", "release", ":bucket-v2")
}
