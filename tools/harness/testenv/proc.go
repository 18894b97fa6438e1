package testenv

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// ProcStatusKiB reads a KiB figure (VmRSS, VmHWM, RssFile, ...) of
// /proc/<pid>/status; without /proc the test is skipped.
func ProcStatusKiB(tb testing.TB, pid int, field string) int {
	tb.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Skipf("no /proc/%d/status: %v", pid, err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				tb.Fatalf("%s of /proc/%d/status: %v", field, pid, err)
			}
			return n
		}
	}
	tb.Fatalf("%s not in /proc/%d/status", field, pid)
	return 0
}
