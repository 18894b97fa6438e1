package runjob

import (
	batchv1 "k8s.io/api/batch/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// Adopt points status.currentRun at job, a running Job of ws found in the
// cluster (a restarted controller's, or one whose status patch was lost),
// and returns it: the Job carries its run (OfJob).
func Adopt(ws *magosv1.Workspace, job *batchv1.Job) *magosv1.RunStatus {
	if cr := ws.Status.CurrentRun; cr != nil && cr.Job == job.Name {
		return cr
	}
	ws.Status.Runs = max(ws.Status.Runs, magosv1.ParseRunAnnotations(job.Annotations).Number)
	ws.Status.CurrentRun = OfJob(job)
	return ws.Status.CurrentRun
}
