package decide

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// decideAnswering is Decide as the reconciler runs it: each fact a
// decision asks for is answered as the tests' facts leave it (content not
// known: the revision is planned; an unlock nothing stands in the way of)
// and decided again. Facts a case sets are never asked for.
func decideAnswering(t testing.TB, f Facts) Decision {
	t.Helper()
	for range 3 {
		d := Decide(f)
		if d.Action != ActAsk {
			return d
		}
		switch d.Ask {
		case AskContent:
			require.Nil(t, f.Content, "content asked for twice")
			f.Content = &ContentCheck{Unknown: "not read in this test"}
		case AskUnlock:
			require.Nil(t, f.Unlock, "unlock asked for twice")
			f.Unlock = &UnlockCheck{}
		default:
			require.Failf(t, "an unknown ask", "%+v", d)
		}
	}
	require.FailNow(t, "decide asks without end")
	return Decision{}
}

// TestDecideAsks: a fact that costs a read is asked for exactly where a
// decision depends on it, never when the facts hold it; an Ask handles no
// request yet and says what holds meanwhile.
func TestDecideAsks(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	plan := &magosv1.PlanStatus{ID: "p1", Revision: "main@sha1:a", InputsDigest: "sha256:in", ContentDigest: "sha256:c", HasChanges: true}
	applied := &magosv1.AppliedStatus{PlanID: "p1", Revision: "main@sha1:a"}
	lock := &magosv1.LockStatus{Lease: "ws-lock", Holder: "run-1"}
	for _, tt := range []struct {
		name string
		f    Facts
		ask  Ask
	}{
		{"a plan would start: what the Workspace reads", Facts{}, AskContent},
		{"a reconcile request would plan: content, and the request waits for the plan", Facts{Requested: true}, AskContent},
		{"only the revision changed: whether it changes anything read", Facts{Plan: plan, Applied: applied}, AskContent},
		{"a person's unlock names the holder: whether it may be released", Facts{Lock: lock, UnlockRequested: true}, AskUnlock},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.f
			f.Now, f.Revision, f.Inputs, f.Name = now, "main@sha1:b", "sha256:in", "ws"
			d := Decide(f)
			assert.Equal(t, ActAsk, d.Action)
			assert.Equal(t, tt.ask, d.Ask)
			assert.False(t, d.HandlesRequest, "an ask handles no request")
			assert.False(t, d.HandledNow())
			answered := decideAnswering(t, f)
			assert.NotEqual(t, ActAsk, answered.Action)
			if tt.f.Requested {
				assert.True(t, answered.HandlesRequest, "the decision once answered handles the request")
			}
		})
	}
	for _, tt := range []struct {
		name string
		f    Facts
	}{
		{"content known: not asked again", Facts{Content: &ContentCheck{Digest: "sha256:c"}}},
		{"an apply reads no content", Facts{Plan: &magosv1.PlanStatus{ID: "p2", Revision: "main@sha1:b", InputsDigest: "sha256:in", HasChanges: true}}},
		{"a lock nobody asked to release: held, nothing read", Facts{Lock: lock}},
		{"an unlock checked: not asked again", Facts{Lock: lock, UnlockRequested: true, Unlock: &UnlockCheck{Running: "Job ws-apply-1"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.f
			f.Now, f.Revision, f.Inputs, f.Name = now, "main@sha1:b", "sha256:in", "ws"
			assert.NotEqual(t, ActAsk, Decide(f).Action)
		})
	}
}
