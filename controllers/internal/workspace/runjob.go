package workspace

import (
	batchv1 "k8s.io/api/batch/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// A run's Job carries the run in its labels and annotations
// (magosv1.RunAnnotations), so that a restarted controller, or one whose
// status patch was lost, reads the run back from the Job: runAnnotations
// writes them, runOfJob reads them.

// runAnnotations are the annotations of rn's Job.
func runAnnotations(rn run) map[string]string {
	return magosv1.RunAnnotations{
		Revision: rn.Artifact.Revision, PlanID: rn.PlanID, InputsDigest: rn.Inputs, Number: rn.Number,
		ArtifactURL: rn.Artifact.URL, ArtifactDigest: rn.Artifact.Digest, ContentDigest: rn.ContentDigest,
		Drift: rn.Drift, Mode: rn.Mode, Request: rn.Request,
	}.Annotations()
}

// runOfJob is the run in progress that job runs.
func runOfJob(job *batchv1.Job) *magosv1.RunStatus {
	started := job.CreationTimestamp
	a := magosv1.ParseRunAnnotations(job.Annotations)
	return &magosv1.RunStatus{
		Job: job.Name, Phase: job.Labels[magosv1.PhaseLabel], Result: magosv1.ResultRunning,
		Revision: a.Revision, InputsDigest: a.InputsDigest, ContentDigest: a.ContentDigest, PlanID: a.PlanID, Drift: a.Drift,
		Mode: a.Mode, Request: a.Request, Started: &started,
	}
}

// adopt points status.currentRun at job, a running Job of ws found in the
// cluster, and returns it.
func adopt(ws *magosv1.Workspace, job *batchv1.Job) *magosv1.RunStatus {
	if cr := ws.Status.CurrentRun; cr != nil && cr.Job == job.Name {
		return cr
	}
	ws.Status.Runs = max(ws.Status.Runs, magosv1.ParseRunAnnotations(job.Annotations).Number)
	ws.Status.CurrentRun = runOfJob(job)
	return ws.Status.CurrentRun
}
