package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
	"github.com/magos-dev/magos/controllers/internal/workspace/runjob"
)

// TestRunnerScratchVolumeIsBounded pins that the runner's writable emptyDir
// has a size limit, so a run cannot fill the node's disk.
func TestRunnerScratchVolumeIsBounded(t *testing.T) {
	ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}}
	rn := runjob.Run{Phase: magosv1.RunPlan, ID: "abc"}
	s := settings{Settings: runjob.Settings{Timeout: time.Minute}}
	tests := []struct {
		name string
		opts config.Options
		want string
	}{
		{name: "default", opts: config.Options{}, want: "4Gi"},
		{name: "set by flag", opts: config.Options{ScratchSize: resource.MustParse("512Mi")}, want: "512Mi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Reconciler{Options: tt.opts}
			job := r.buildJob(ws, rn, s)
			var found bool
			for _, v := range job.Spec.Template.Spec.Volumes {
				if v.Name != "work" {
					continue
				}
				found = true
				require.NotNil(t, v.EmptyDir)
				require.NotNil(t, v.EmptyDir.SizeLimit, "the scratch volume has a size limit")
				assert.Equal(t, tt.want, v.EmptyDir.SizeLimit.String())
			}
			assert.True(t, found, "the Job has the scratch volume")
		})
	}
}
