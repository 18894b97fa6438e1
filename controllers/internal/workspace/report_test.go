package workspace

import (
	"testing"

	"github.com/stretchr/testify/assert"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

func TestEventMetadataNamesTheRunOrPlanTheEventIsAbout(t *testing.T) {
	source := &magosv1.SourceStatus{Revision: "main@sha1:new"}
	plan := &magosv1.PlanStatus{ID: "p-2", Revision: "main@sha1:planned"}
	run := &magosv1.RunStatus{PlanID: "p-3", Revision: "main@sha1:running"}
	for _, tc := range []struct {
		name   string
		status magosv1.WorkspaceStatus
		want   map[string]string
	}{
		{"the current run first", magosv1.WorkspaceStatus{Source: source, Plan: plan, CurrentRun: run},
			map[string]string{"magos.dev/revision": "main@sha1:running", "magos.dev/planID": "p-3"}},
		{"else the plan", magosv1.WorkspaceStatus{Source: source, Plan: plan},
			map[string]string{"magos.dev/revision": "main@sha1:planned", "magos.dev/planID": "p-2"}},
		{"else the source's revision", magosv1.WorkspaceStatus{Source: source},
			map[string]string{"magos.dev/revision": "main@sha1:new"}},
		{"nothing known yet", magosv1.WorkspaceStatus{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, eventMetadata(&magosv1.Workspace{Status: tc.status}))
		})
	}
}
