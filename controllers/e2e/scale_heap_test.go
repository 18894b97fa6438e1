package e2e

import (
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// heapAlloc is the live heap in the text form of a heap profile (the
// runtime's MemStats, read after the collection ?gc=1 asks for).
var heapAlloc = regexp.MustCompile(`(?m)^# HeapAlloc = ([0-9]+)$`)

// liveHeapBytes is the controller's live heap after a collection, 0 when
// it cannot be read.
func (s *scaleRun) liveHeapBytes() float64 {
	resp, err := http.Get("http://" + s.pprofAddr + "/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0
	}
	m := heapAlloc.FindSubmatch(raw)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

// pprofTotal is the total in-use size in `go tool pprof -top`'s header.
var pprofTotal = regexp.MustCompile(`of ([0-9.]+)([kMG]?B) total`)

// pprofBytes are the bytes of a size pprof prints.
func pprofBytes(v, unit string) float64 {
	f, _ := strconv.ParseFloat(v, 64)
	return f * map[string]float64{"B": 1, "kB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}[unit]
}

// reportLiveHeap prints what the controller's heap holds after a
// collection (its live objects: what a memory limit must fit), per
// Workspace above the baseline it held before any, and where it is: the
// top of its heap profile, saved for `go tool pprof`.
func (s *scaleRun) reportLiveHeap(baseline float64) {
	if live := s.liveHeapBytes(); live > 0 && baseline > 0 {
		perWorkspace := (live - baseline) / 1024 / float64(s.n)
		s.report("  live heap after a collection: %.0f MiB, %.0f MiB before any Workspace, %.1f KiB per Workspace", live/(1<<20), baseline/(1<<20), perWorkspace)
		s.b.ReportMetric(perWorkspace, "live-heap-KiB/workspace")
	}
	resp, err := http.Get("http://" + s.pprofAddr + "/debug/pprof/heap?gc=1")
	if err != nil {
		s.report("  live heap: not read (%v)", err)
		return
	}
	defer resp.Body.Close()
	profile := filepath.Join(os.TempDir(), "magos-scale-heap.pb.gz")
	f, err := os.Create(profile)
	if err == nil {
		_, err = io.Copy(f, resp.Body)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		s.report("  live heap: not saved (%v)", err)
		return
	}
	out, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=12", "-sample_index=inuse_space", profile).CombinedOutput()
	if err != nil {
		s.report("  live heap: go tool pprof failed (%v): %s", err, out)
		return
	}
	if m := pprofTotal.FindStringSubmatch(string(out)); m != nil {
		live := pprofBytes(m[1], m[2])
		s.report("  where the live heap is, sampled (go tool pprof -top %s): %.0f MiB", profile, live/(1<<20))
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.HasPrefix(line, "File:") || strings.HasPrefix(line, "Type:") || strings.HasPrefix(line, "Time:") || strings.HasPrefix(line, "Build ID:") {
			continue
		}
		s.report("    %s", line)
	}
}
