package setup

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// The controllers' memory is mostly their caches, and with Go's default
// collector a heap may grow to twice what is live before it is collected:
// a controller whose live objects fit its container's memory limit could
// still be killed for the garbage it had not collected yet. So the Go
// runtime is given a soft memory limit of memoryLimitShare of the
// container's limit (the rest is for what the runtime does not count: the
// binary's own pages), and collects harder as it nears it, as a
// GOMEMLIMIT in the environment would; an explicit GOMEMLIMIT wins.

// memoryLimitShare is the part of the container's memory limit the Go
// runtime is told it may use.
const memoryLimitShare = 0.9

// cgroupMemoryLimitFiles are where a container reads its memory limit:
// cgroup v2, then v1, relative to the cgroup filesystem's root.
var cgroupMemoryLimitFiles = []string{"memory.max", "memory/memory.limit_in_bytes"}

// noLimitV1 is above what cgroup v1 reports for "no limit" (about 2^63
// rounded down to a page).
const noLimitV1 = 1 << 62

// goMemoryLimit returns the soft memory limit to give the Go runtime for a
// container whose cgroup filesystem is at root, and false when GOMEMLIMIT
// is set (getenv) or the container has no memory limit.
func goMemoryLimit(root string, getenv func(string) string) (int64, bool, error) {
	if getenv("GOMEMLIMIT") != "" {
		return 0, false, nil
	}
	for _, name := range cgroupMemoryLimitFiles {
		b, err := os.ReadFile(filepath.Join(root, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, false, err
		}
		v := strings.TrimSpace(string(b))
		if v == "max" {
			return 0, false, nil
		}
		limit, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, false, err
		}
		if limit <= 0 || limit >= noLimitV1 {
			return 0, false, nil
		}
		return GoMemoryLimitOf(limit), true, nil
	}
	return 0, false, nil
}

// GoMemoryLimitOf is the Go runtime's soft memory limit in a container
// limited to containerLimit bytes.
func GoMemoryLimitOf(containerLimit int64) int64 {
	return int64(math.Floor(float64(containerLimit) * memoryLimitShare))
}

// applyMemoryLimit gives the Go runtime its soft memory limit from the
// container's (see goMemoryLimit) and returns it, 0 when none was set.
func applyMemoryLimit() (int64, error) {
	limit, ok, err := goMemoryLimit("/sys/fs/cgroup", os.Getenv)
	if err != nil || !ok {
		return 0, err
	}
	debug.SetMemoryLimit(limit)
	return limit, nil
}
