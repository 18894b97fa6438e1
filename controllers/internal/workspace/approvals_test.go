package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

func TestRecordApprovals(t *testing.T) {
	t1, t2 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC)
	p := &magosv1.PlanStatus{ID: "p2", Digest: "sha256:plan"}
	entries := []magosv1.Approval{
		{Plan: "p1", User: "carol"},                      // another plan
		{Plan: "p2", Digest: "sha256:old", User: "dave"}, // another digest
		{Plan: "p2", Digest: "sha256:plan", User: "alice", Groups: []string{"platform-admins"}},
	}
	added := recordApprovals(p, entries, t1)
	want := []magosv1.PlanApproval{{User: "alice", Groups: []string{"platform-admins"}, Time: metav1.NewTime(t1)}}
	assert.Equal(t, want, added)
	assert.Equal(t, want, p.Approvals)
	assert.Equal(t, "alice (groups platform-admins)", approver(added[0]))

	entries = append(entries, magosv1.Approval{Plan: "p2", User: "bob"})
	added = recordApprovals(p, entries, t2)
	assert.Equal(t, []magosv1.PlanApproval{{User: "bob", Time: metav1.NewTime(t2)}}, added, "only the new approver, at the time first seen")
	assert.Len(t, p.Approvals, 2)
	assert.Equal(t, metav1.NewTime(t1), p.Approvals[0].Time, "alice's approval keeps its time")
	assert.Empty(t, recordApprovals(p, entries, t2), "nothing new")
}
