package executor

import (
	"bytes"
	"os"
	"strconv"
	"syscall"

	"k8s.io/apimachinery/pkg/types"
)

// podMarkerEnv names the variable the executor sets on every Pod process.
// Everything the process starts inherits it, also what leaves its process
// group or session: OpenTofu runs in a process group of its own, and a
// local-exec provisioner may start a daemon. A node's kubelet ends them
// all with the container's cgroup; the executor, which has no cgroups,
// finds them by the marker. A process that clears its environment escapes
// it: the executor is a harness for running Magos on one machine, not an
// isolation boundary.
const podMarkerEnv = "MAGOS_LOCAL_POD_UID"

// maxLeftoverRounds bounds how often killLeftovers scans: a process may
// start another while it is killed.
const maxLeftoverRounds = 10

// podMarker is the environment entry of the Pod with uid.
func podMarker(uid types.UID) string { return podMarkerEnv + "=" + string(uid) }

// killLeftovers kills, with SIGKILL, every process that carries the marker
// of the Pod with uid, until none is left; it returns how many it killed.
// A killed process is a zombie until its parent reaps it, and a zombie's
// environment reads empty, so a later round does not count it again.
func killLeftovers(uid types.UID) int {
	marker := []byte(podMarker(uid))
	killed := 0
	for range maxLeftoverRounds {
		pids := markedProcesses(marker)
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed++
			}
		}
	}
	return killed
}

// markedProcesses lists the processes whose environment holds marker as
// one entry. Processes whose environment cannot be read (another user's,
// or gone) are skipped.
func markedProcesses(marker []byte) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		environ, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for entry := range bytes.SplitSeq(environ, []byte{0}) {
			if bytes.Equal(entry, marker) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}
