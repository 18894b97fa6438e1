package v1alpha1

import (
	"encoding/json"
	"strconv"
)

// RunAnnotations is what a run's Job carries in its annotations, typed:
// the controller writes it with Annotations when it creates the Job and
// reads it back with ParseRunAnnotations (a restarted controller, or one
// whose status patch was lost, adopts the run from its Job), and the
// artifact proxy reads which artifact the run may fetch.
// +kubebuilder:object:generate=false
type RunAnnotations struct {
	// Revision is the source revision the run runs.
	Revision string
	// PlanID is the plan the run stores (plan) or applies (apply).
	PlanID string
	// InputsDigest is the digest of the inputs the run got.
	InputsDigest string
	// Number is the Workspace's run counter for this run.
	Number int64
	// ArtifactURL and ArtifactDigest are the artifact the run works on, at
	// source-controller.
	ArtifactURL, ArtifactDigest string
	// ContentDigest is the digest of the files a plan run's configuration
	// reads in the artifact; empty when unknown.
	ContentDigest string
	// Drift is true for a drift re-plan.
	Drift bool
	// Mode is the run's PlanMode, empty for a normal plan or apply.
	Mode PlanMode
	// Request is the PlanRequest a plan run plans with, nil for a full plan.
	Request *PlanRequest
}

// Annotations are the Job annotations that carry a.
func (a RunAnnotations) Annotations() map[string]string {
	out := map[string]string{
		RevisionAnnotation:       a.Revision,
		PlanIDAnnotation:         a.PlanID,
		InputsDigestAnnotation:   a.InputsDigest,
		RunNumberAnnotation:      strconv.FormatInt(a.Number, 10),
		ArtifactURLAnnotation:    a.ArtifactURL,
		ArtifactDigestAnnotation: a.ArtifactDigest,
	}
	if a.ContentDigest != "" {
		out[ContentDigestAnnotation] = a.ContentDigest
	}
	if a.Drift {
		out[DriftAnnotation] = "true"
	}
	if a.Mode != "" {
		out[PlanModeAnnotation] = string(a.Mode)
	}
	if a.Request != nil {
		if b, err := json.Marshal(a.Request); err == nil {
			out[PlanRequestAnnotation] = string(b)
		}
	}
	return out
}

// ParseRunAnnotations reads the RunAnnotations of a run's Job. What does not
// parse reads as unset: a run number as 0, a plan request as a full plan.
func ParseRunAnnotations(annotations map[string]string) RunAnnotations {
	a := RunAnnotations{
		Revision:       annotations[RevisionAnnotation],
		PlanID:         annotations[PlanIDAnnotation],
		InputsDigest:   annotations[InputsDigestAnnotation],
		ArtifactURL:    annotations[ArtifactURLAnnotation],
		ArtifactDigest: annotations[ArtifactDigestAnnotation],
		ContentDigest:  annotations[ContentDigestAnnotation],
		Drift:          annotations[DriftAnnotation] == "true",
		Mode:           PlanMode(annotations[PlanModeAnnotation]),
	}
	a.Number, _ = strconv.ParseInt(annotations[RunNumberAnnotation], 10, 64)
	if v := annotations[PlanRequestAnnotation]; v != "" {
		var rq PlanRequest
		if err := json.Unmarshal([]byte(v), &rq); err == nil && rq.ID != "" {
			a.Request = &rq
		}
	}
	return a
}
