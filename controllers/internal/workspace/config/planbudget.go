package config

import (
	"time"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// EtcdDefaultQuotaBytes is etcd's default backend quota
// (--quota-backend-bytes): past it, etcd refuses every write of the
// cluster until an operator compacts, defragments and disarms the alarm.
const EtcdDefaultQuotaBytes = 2 << 30

// CompactionHistory is how long etcd keeps the versions of a key with the
// apiserver's default compaction: kube-apiserver compacts every 5 minutes
// (--etcd-compaction-interval) to the revision it read at the previous
// compaction, so just before a compaction etcd holds every version written
// in the last two intervals.
const CompactionHistory = 10 * time.Minute

// chunkOverheadBytes is what a plan Secret weighs in etcd besides its data
// (metadata, labels, annotations, managed fields), rounded up.
const chunkOverheadBytes = 4 << 10

// PlanWriteBudget is the most bytes the plans of one namespace can write to
// etcd within history, when at most plans start per rate window (a sliding
// window: ⌊history/window⌋+1 bursts fit in history, one at each end) and
// each rewrites at most chunks plan Secrets; -1 when plans is not positive
// (no bound). It is pure.
func PlanWriteBudget(plans int, window time.Duration, chunks int, history time.Duration) int64 {
	if plans <= 0 {
		return -1
	}
	if window <= 0 {
		window = time.Minute
	}
	bursts := int64(history/window) + 1
	return int64(plans) * bursts * int64(chunks) * (magosv1.PlanChunkBytes + chunkOverheadBytes)
}

// PlanWriteBudget is PlanWriteBudget of these options, over
// CompactionHistory.
func (o Options) PlanWriteBudget() int64 {
	return PlanWriteBudget(o.MaxPlansPerNamespacePerMinute, o.PlanRateWindow, o.PlanChunks(), CompactionHistory)
}
