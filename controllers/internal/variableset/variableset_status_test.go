package variableset

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

func TestComputeStatus(t *testing.T) {
	ready := &rendered{
		Env:        []corev1.EnvVar{{Name: "TF_VAR_a", Value: "1"}},
		References: []magosv1.ReferenceStatus{{Kind: KindSecret, Name: "s", Ready: true}},
		Digest:     "sha256:new",
	}
	optional := &rendered{
		References:      []magosv1.ReferenceStatus{{Kind: KindSecret, Name: "s", Message: "Secret s not found (optional, missing)"}},
		OptionalMissing: 1,
		Digest:          "sha256:new",
	}
	missing := &rendered{
		References: []magosv1.ReferenceStatus{{Kind: KindSecret, Name: "db-creds", Key: "password", Message: "Secret db-creds has no key password"}},
		Missing:    []string{"Secret db-creds has no key password"},
		Digest:     "sha256:new",
	}
	var many []string
	for i := range 8 {
		many = append(many, fmt.Sprintf("Secret s%d not found", i))
	}

	type want struct {
		ready, reconciling, stalled metav1.ConditionStatus // "" = absent
		reason                      string
		message                     string
		observedGenerationUpdated   bool
		digest                      string
	}
	tests := []struct {
		name string
		obs  observation
		want want
	}{
		{name: "every reference present is Ready",
			obs: observation{Rendered: ready},
			want: want{ready: "True", reason: magosv1.ReconciliationSucceededReason,
				message: "Rendered 1 environment variables from 1 references", observedGenerationUpdated: true, digest: "sha256:new"}},
		{name: "an optional reference missing is still Ready",
			obs: observation{Rendered: optional},
			want: want{ready: "True", reason: magosv1.ReconciliationSucceededReason,
				message: "Rendered 0 environment variables from 1 references; 1 optional references missing", observedGenerationUpdated: true, digest: "sha256:new"}},
		{name: "a required reference missing waits, naming it, and is not Stalled",
			obs: observation{Rendered: missing},
			want: want{ready: "False", reconciling: "True", reason: magosv1.ReasonReferenceNotFound,
				message: "Waiting for Secret db-creds has no key password", observedGenerationUpdated: true, digest: "sha256:new"}},
		{name: "many missing references are bounded in the message",
			obs: observation{Rendered: &rendered{Missing: many, Digest: "sha256:new"}},
			want: want{ready: "False", reconciling: "True", reason: magosv1.ReasonReferenceNotFound,
				message:                   "Waiting for Secret s0 not found; Secret s1 not found; Secret s2 not found; Secret s3 not found; Secret s4 not found; and 3 more (see status.references)",
				observedGenerationUpdated: true, digest: "sha256:new"}},
		{name: "a read error retries and keeps the last rendering",
			obs: observation{Err: rerror.Retry(magosv1.ReasonReferenceReadFailed, errors.New("reading Secret s: connection refused"))},
			want: want{ready: "False", reconciling: "True", reason: magosv1.ReasonReferenceReadFailed,
				message: "reading Secret s: connection refused", digest: "sha256:old", observedGenerationUpdated: true}},
		{name: "an untyped error retries with ProgressingWithRetry",
			obs: observation{Err: errors.New("boom")},
			want: want{ready: "False", reconciling: "True", reason: magosv1.ProgressingWithRetryReason, message: "boom", digest: "sha256:old",
				observedGenerationUpdated: true}},
		{name: "a stalling error stalls",
			obs: observation{Err: rerror.Stall(magosv1.InvalidSpecReason, errors.New("bad"))},
			want: want{ready: "False", stalled: "True", reason: magosv1.InvalidSpecReason, message: "bad", digest: "sha256:old",
				observedGenerationUpdated: true}},
		{name: "nothing observed (deleting) leaves status alone",
			obs:  observation{},
			want: want{ready: "True", reason: "Old", message: "old", digest: "sha256:old"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs := &magosv1.VariableSet{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
			vs.Status.ObservedGeneration = 1
			vs.Status.InputsDigest = "sha256:old"
			conditions.Set(vs, magosv1.ReadyCondition, metav1.ConditionTrue, "Old", "old")
			computeStatus(vs, tt.obs)

			status := func(ct string) metav1.ConditionStatus {
				if c := conditions.Get(vs, ct); c != nil {
					return c.Status
				}
				return ""
			}
			assert.Equal(t, tt.want.ready, status(magosv1.ReadyCondition), "Ready")
			assert.Equal(t, tt.want.reconciling, status(magosv1.ReconcilingCondition), "Reconciling")
			assert.Equal(t, tt.want.stalled, status(magosv1.StalledCondition), "Stalled")
			r := conditions.Get(vs, magosv1.ReadyCondition)
			assert.Equal(t, tt.want.reason, r.Reason)
			assert.Equal(t, tt.want.message, r.Message)
			assert.Equal(t, tt.want.digest, vs.Status.InputsDigest)
			if tt.want.observedGenerationUpdated {
				assert.Equal(t, int64(2), vs.Status.ObservedGeneration)
			} else {
				assert.Equal(t, int64(1), vs.Status.ObservedGeneration)
			}
		})
	}
}
