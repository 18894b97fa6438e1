package runjob

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	batchv1 "k8s.io/api/batch/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// Artifact is the source artifact a run reads: where it is, its revision
// and its digest.
type Artifact struct {
	URL, Revision, Digest string
}

// Run describes one run the controller wants.
type Run struct {
	Phase    string
	ID       string
	Artifact Artifact
	// PlanID and PlanDigest: for plan runs the ID to store under; for apply
	// runs the plan to apply and its approved digest. PlanBundleDigest is
	// the stored plan's bundle digest an apply checks.
	PlanID           string
	PlanDigest       string
	PlanBundleDigest string
	Drift            bool
	// Mode is PlanModeDestroy for a destroy plan and its apply.
	Mode magosv1.PlanMode
	// Request is the plan request a plan run plans with (-target,
	// -replace); nil for a full plan.
	Request *magosv1.PlanRequest
	// Number counts the Workspace's runs (status.runs once started);
	// Inputs is the inputs digest the run uses.
	Number int64
	Inputs string
	// ContentDigest is the digest of the files a plan run's configuration
	// reads in Artifact (configtree); empty when unknown.
	ContentDigest string
}

// ID derives a deterministic run ID, so a restarted controller computes
// the same Job name and adopts the Job instead of starting a second one.
func ID(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(h[:])[:10]
}

// JobName is the deterministic name of a run's Job (at most 63 characters).
func JobName(ws *magosv1.Workspace, r Run) string {
	base := ws.Name
	if len(base) > 40 {
		base = strings.TrimRight(base[:40], "-.")
	}
	return base + "-" + r.Phase + "-" + r.ID
}

// A run's Job carries the run in its labels and annotations
// (magosv1.RunAnnotations), so that a restarted controller, or one whose
// status patch was lost, reads the run back from the Job: Annotations
// writes them, OfJob reads them.

// Annotations are the annotations of rn's Job.
func Annotations(rn Run) map[string]string {
	return magosv1.RunAnnotations{
		Revision: rn.Artifact.Revision, PlanID: rn.PlanID, InputsDigest: rn.Inputs, Number: rn.Number,
		ArtifactURL: rn.Artifact.URL, ArtifactDigest: rn.Artifact.Digest, ContentDigest: rn.ContentDigest,
		Drift: rn.Drift, Mode: rn.Mode, Request: rn.Request,
	}.Annotations()
}

// OfJob is the run in progress that job runs. It does not record the
// Job's UID: only Started, for a Job this controller created, does.
func OfJob(job *batchv1.Job) *magosv1.RunStatus {
	started := job.CreationTimestamp
	a := magosv1.ParseRunAnnotations(job.Annotations)
	return &magosv1.RunStatus{
		Job: job.Name, Phase: job.Labels[magosv1.PhaseLabel], Result: magosv1.ResultRunning,
		Revision: a.Revision, InputsDigest: a.InputsDigest, ContentDigest: a.ContentDigest, PlanID: a.PlanID, Drift: a.Drift,
		Mode: a.Mode, Request: a.Request, Started: &started, ArtifactURL: a.ArtifactURL, ArtifactDigest: a.ArtifactDigest,
	}
}

// Started is the run in progress of job, which this controller has just
// created: OfJob with the Job's UID, which the artifact proxy binds the
// run's artifact to. A Job found in the cluster (Adopt) is never recorded
// so: anyone who may create Jobs in the namespace could have made it.
func Started(job *batchv1.Job) *magosv1.RunStatus {
	cr := OfJob(job)
	cr.JobUID = job.UID
	return cr
}
