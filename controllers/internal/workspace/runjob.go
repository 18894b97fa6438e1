package workspace

import (
	"encoding/json"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// A run's Job carries the run in its labels and annotations, so that a
// restarted controller, or one whose status patch was lost, reads the run
// back from the Job (the run contract's annotations): runAnnotations
// writes them, runOfJob reads them.
// runAnnotations are the annotations of rn's Job.
func runAnnotations(rn run) map[string]string {
	a := map[string]string{
		magosv1.RevisionAnnotation:       rn.Artifact.Revision,
		magosv1.PlanIDAnnotation:         rn.PlanID,
		magosv1.InputsDigestAnnotation:   rn.Inputs,
		magosv1.RunNumberAnnotation:      strconv.FormatInt(rn.Number, 10),
		magosv1.ArtifactURLAnnotation:    rn.Artifact.URL,
		magosv1.ArtifactDigestAnnotation: rn.Artifact.Digest,
	}
	if rn.Drift {
		a[magosv1.DriftAnnotation] = "true"
	}
	if rn.Mode != "" {
		a[magosv1.PlanModeAnnotation] = string(rn.Mode)
	}
	if rn.Request != nil {
		if b, err := json.Marshal(rn.Request); err == nil {
			a[magosv1.PlanRequestAnnotation] = string(b)
		}
	}
	return a
}

// planRequestOf is the plan request job's plan run plans with, nil for a
// full plan (or an annotation that does not parse).
func planRequestOf(job *batchv1.Job) *magosv1.PlanRequest {
	v := job.Annotations[magosv1.PlanRequestAnnotation]
	if v == "" {
		return nil
	}
	var rq magosv1.PlanRequest
	if err := json.Unmarshal([]byte(v), &rq); err != nil || rq.ID == "" {
		return nil
	}
	return &rq
}

// runOfJob is the run in progress that job runs.
func runOfJob(job *batchv1.Job) *magosv1.RunStatus {
	started := job.CreationTimestamp
	return &magosv1.RunStatus{
		Job: job.Name, Phase: job.Labels[magosv1.PhaseLabel], Result: magosv1.ResultRunning,
		Revision: job.Annotations[magosv1.RevisionAnnotation], InputsDigest: job.Annotations[magosv1.InputsDigestAnnotation],
		PlanID: job.Annotations[magosv1.PlanIDAnnotation], Drift: job.Annotations[magosv1.DriftAnnotation] == "true",
		Mode: magosv1.PlanMode(job.Annotations[magosv1.PlanModeAnnotation]), Request: planRequestOf(job), Started: &started,
	}
}

// adopt points status.currentRun at job, a running Job of ws found in the
// cluster, and returns it.
func adopt(ws *magosv1.Workspace, job *batchv1.Job) *magosv1.RunStatus {
	if cr := ws.Status.CurrentRun; cr != nil && cr.Job == job.Name {
		return cr
	}
	n, _ := strconv.ParseInt(job.Annotations[magosv1.RunNumberAnnotation], 10, 64)
	ws.Status.Runs = max(ws.Status.Runs, n)
	ws.Status.CurrentRun = runOfJob(job)
	return ws.Status.CurrentRun
}
