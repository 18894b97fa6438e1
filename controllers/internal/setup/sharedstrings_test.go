package setup

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// decoded is a Workspace as the decoder gives it: every string its own
// copy.
func decoded(name string) *magosv1.Workspace {
	fresh := func(s string) string { return strings.Clone(s) }
	return &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: fresh(name), Namespace: fresh("team")},
		Spec:       magosv1.WorkspaceSpec{SourceRef: magosv1.SourceReference{Kind: fresh("GitRepository"), Name: fresh("infra")}, Path: fresh("./net")},
		Status: magosv1.WorkspaceStatus{
			Conditions: []metav1.Condition{{Type: fresh("Ready"), Status: metav1.ConditionTrue, Reason: fresh("Applied"), Message: fresh("Applied revision main@sha1:abc")}},
			Source:     &magosv1.SourceStatus{URL: fresh("http://source/a.tar.gz"), Revision: fresh("main@sha1:abc"), Digest: fresh("sha256:1")},
			Plan:       &magosv1.PlanStatus{Revision: fresh("main@sha1:abc"), InputsDigest: fresh("sha256:" + name)},
		},
	}
}

func sameBytes(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

// TestTrimWorkspaceSharesWhatWorkspacesHoldAlike: two Workspaces of one
// source and revision hold one copy of their namespace, source, revision
// and condition message; their own names and inputs digests stay theirs,
// and no value changes.
func TestTrimWorkspaceSharesWhatWorkspacesHoldAlike(t *testing.T) {
	workspaceStrings = &sharedStrings{max: 16384}
	a, err := trimWorkspace(decoded("a"))
	require.NoError(t, err)
	b, err := trimWorkspace(decoded("b"))
	require.NoError(t, err)
	wa, wb := a.(*magosv1.Workspace), b.(*magosv1.Workspace)

	assert.Equal(t, decoded("b"), wb, "sharing changes no value")
	assert.True(t, sameBytes(wa.Namespace, wb.Namespace))
	assert.True(t, sameBytes(wa.Status.Source.URL, wb.Status.Source.URL))
	assert.True(t, sameBytes(wa.Status.Source.Revision, wb.Status.Plan.Revision), "one revision, wherever it is held")
	assert.True(t, sameBytes(wa.Status.Conditions[0].Message, wb.Status.Conditions[0].Message))
	assert.False(t, sameBytes(wa.Name, wb.Name))
	assert.NotEqual(t, wa.Status.Plan.InputsDigest, wb.Status.Plan.InputsDigest)
}

// TestSharedStringsForgetWhenFull: the pool never holds more than its
// bound.
func TestSharedStringsForgetWhenFull(t *testing.T) {
	p := &sharedStrings{max: 2}
	for _, s := range []string{"a", "b", "c", "a"} {
		p.share(&s)
	}
	assert.LessOrEqual(t, len(p.seen), 2)
	assert.Contains(t, p.seen, "a")
}

// TestShareMetadataSharesKeysNotValues: two runs' Jobs hold one copy of
// their namespace, label keys and owner kind; their label values, names
// and UIDs stay their own, and no value changes.
func TestShareMetadataSharesKeysNotValues(t *testing.T) {
	job := func(name string) *batchv1.Job {
		fresh := strings.Clone
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{
			Name: fresh(name), Namespace: fresh("team"), UID: types.UID(fresh("uid-" + name)),
			Labels:          map[string]string{fresh("magos.dev/workspace"): fresh(name), fresh("batch.kubernetes.io/controller-uid"): fresh("uid-" + name)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: fresh("magos.dev/v1alpha1"), Kind: fresh("Workspace"), Name: fresh(name)}},
			Finalizers:      []string{fresh("batch.kubernetes.io/job-tracking")},
		}}
	}
	a, err := trimJob(job("a"))
	require.NoError(t, err)
	b, err := trimJob(job("b"))
	require.NoError(t, err)
	ja, jb := a.(*batchv1.Job), b.(*batchv1.Job)
	assert.Equal(t, job("b").ObjectMeta, jb.ObjectMeta, "sharing changes no value")

	key := func(m map[string]string, want string) string {
		for k := range m {
			if k == want {
				return k
			}
		}
		return ""
	}
	assert.True(t, sameBytes(ja.Namespace, jb.Namespace))
	assert.True(t, sameBytes(key(ja.Labels, "magos.dev/workspace"), key(jb.Labels, "magos.dev/workspace")))
	assert.True(t, sameBytes(ja.OwnerReferences[0].Kind, jb.OwnerReferences[0].Kind))
	assert.True(t, sameBytes(ja.Finalizers[0], jb.Finalizers[0]))
	assert.False(t, sameBytes(ja.Labels["magos.dev/workspace"], jb.Labels["magos.dev/workspace"]))
}
