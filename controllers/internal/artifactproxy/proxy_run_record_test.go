package artifactproxy

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestOnlyTheRunTheControllerRecordedIsServed: the proxy serves a token's
// Pod only the artifact of the run its Workspace's status records, the
// Job the controller created (name and UID), run as the runner
// ServiceAccount of its phase, with the artifact it was started on. A Job
// anyone who may create Jobs can make, controlled by the Workspace and
// labelled as the controller labels, naming the Workspace's own artifact,
// gets nothing: at first a 503 (the controller records a run just after
// it creates the Job), then 403.
func TestOnlyTheRunTheControllerRecordedIsServed(t *testing.T) {
	f := newFixture(t)
	data := []byte("the artifact of infra")
	art := f.publish(f.ns, "infra", data)
	other := f.publish(f.ns, "infra", []byte("a later artifact of infra"))

	t.Run("the recorded run is served", func(t *testing.T) {
		ws := f.newWorkspace("recorded", "", "infra", nil)
		job := f.newJob(ws, "recorded-plan-1", magosv1.RunPlan, art)
		f.record(ws, job, nil)
		code, body := f.fetch(f.newPod(job, ""))
		require.Equal(t, http.StatusOK, code, "%s", body)
		assert.Equal(t, art.Digest, sha256Digest(body))
	})

	t.Run("a Job the controller did not create", func(t *testing.T) {
		ws := f.newWorkspace("tenant", "", "infra", nil)
		recorded := f.newJob(ws, "tenant-plan-1", magosv1.RunPlan, art)
		f.record(ws, recorded, nil)
		forged := f.newJob(ws, "tenant-own", magosv1.RunPlan, art)
		token := f.newPod(forged, "")
		code, body := f.fetch(token)
		assert.Equal(t, http.StatusServiceUnavailable, code, "not recorded (yet): %s", body)
		code, body = f.fetchFrom(later(t), token)
		assert.Equal(t, http.StatusForbidden, code, "never recorded: %s", body)
	})

	for _, tt := range []struct {
		name  string
		ws    string
		phase string
		sa    string // the Pod's ServiceAccount; "" the Job's
		edit  func(*magosv1.RunStatus)
	}{
		{name: "a Job of the recorded name with another UID", ws: "other-uid", phase: magosv1.RunPlan,
			edit: func(cr *magosv1.RunStatus) { cr.JobUID = "0b6c5a3e-0000-4000-8000-000000000000" }},
		{name: "a run adopted, not started, by the controller", ws: "adopted", phase: magosv1.RunPlan,
			edit: func(cr *magosv1.RunStatus) { cr.JobUID = "" }},
		{name: "a run that ended", ws: "ended", phase: magosv1.RunPlan,
			edit: func(cr *magosv1.RunStatus) { cr.Result = magosv1.ResultSucceeded }},
		{name: "a plan run's Pod as the apply identity", ws: "plan-as-apply", phase: magosv1.RunPlan, sa: "apply"},
		{name: "an apply run's Pod as the plan identity", ws: "apply-as-plan", phase: magosv1.RunApply, sa: "plan"},
		{name: "a Job naming another artifact than the record", ws: "other-artifact", phase: magosv1.RunPlan,
			edit: func(cr *magosv1.RunStatus) { cr.ArtifactURL, cr.ArtifactDigest = other.URL, other.Digest }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ws := f.newWorkspace(tt.ws, "", "infra", nil)
			job := f.newJob(ws, ws.Name+"-run", tt.phase, art)
			f.record(ws, job, tt.edit)
			sa := map[string]string{"": "", "apply": magosv1.RunnerServiceAccountName(ws.Name), "plan": magosv1.PlanRunnerServiceAccountName(ws.Name)}[tt.sa]
			code, body := f.fetch(f.newPod(job, sa))
			assert.Equal(t, http.StatusForbidden, code, "%s", body)
		})
	}
}
