package config

import (
	"flag"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestPlanWriteBudget: the most bytes one namespace's plans write to etcd
// within the history etcd keeps: the plans the rate lets start in that
// time (a burst at each end of every window: ⌊history/window⌋+1 bursts),
// each rewriting up to the chunk bound of plan Secrets.
func TestPlanWriteBudget(t *testing.T) {
	chunk := int64(magosv1.PlanChunkBytes + chunkOverheadBytes)
	for _, tt := range []struct {
		name          string
		plans, chunks int
		window, hist  time.Duration
		want          int64
	}{
		{"one plan a minute over one minute: a burst at each end", 1, 1, time.Minute, time.Minute, 2 * chunk},
		{"ten a minute over ten minutes, 16 chunks", 10, 16, time.Minute, 10 * time.Minute, 10 * 11 * 16 * chunk},
		{"a history shorter than the window", 5, 2, time.Minute, 30 * time.Second, 5 * 2 * chunk},
		{"a history not a multiple of the window", 3, 1, 2 * time.Minute, 5 * time.Minute, 3 * 3 * chunk},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, PlanWriteBudget(tt.plans, tt.window, tt.chunks, tt.hist))
		})
	}
	assert.Equal(t, int64(-1), PlanWriteBudget(0, time.Minute, 16, CompactionHistory), "no rate, no bound")
}

// TestDefaultPlanWriteBudgetFitsEtcdsQuota: with the flags' defaults, the
// plans of one namespace cannot write etcd's default quota (2 GiB) within
// the history the apiserver's default compaction (every 5 minutes, to the
// previous compaction's revision) leaves it: 10 minutes. Before, 60 plans
// a minute of 16 chunks could write about 7.7 GiB.
func TestDefaultPlanWriteBudgetFitsEtcdsQuota(t *testing.T) {
	var o Options
	fs := flag.NewFlagSet("workspace-controller", flag.ContinueOnError)
	o.BindFlags(fs)
	require.NoError(t, fs.Parse(nil))
	budget := o.PlanWriteBudget()
	assert.Positive(t, budget)
	assert.Less(t, budget, int64(EtcdDefaultQuotaBytes), "%d MiB within %s", budget>>20, CompactionHistory)
	assert.Equal(t, 10*time.Minute, CompactionHistory)
	assert.Equal(t, int64(2<<30), int64(EtcdDefaultQuotaBytes))
}
