package executor_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/magos-dev/magos/tools/harness/executor"
)

// The processes a Pod's process starts and leaves behind, even in a
// session of their own, end with it: as a node ends a container's every
// process, whether the process exits, is stopped at its deadline or dies
// with the executor (make demo-stop).
func TestProcessesAPodLeavesEndWithIt(t *testing.T) {
	env.Require(t)
	t.Run("the process exits", func(t *testing.T) {
		f := newFixture(t)
		startExecutor(t, f.ns)
		job, orphan := withOrphan(t, f.job("plan-1", "succeed"))
		key := create(t, job)
		waitJob(t, key, batchv1.JobComplete)
		requireGone(t, orphanPID(t, orphan))
	})
	t.Run("the deadline stops it", func(t *testing.T) {
		f := newFixture(t)
		startExecutor(t, f.ns)
		job, orphan := withOrphan(t, f.job("apply-1", "sleep"))
		job.Spec.ActiveDeadlineSeconds = new(int64(3))
		key := create(t, job)
		waitPod(t, key, phase(corev1.PodRunning))
		pid := orphanPID(t, orphan)
		got := waitJob(t, key, batchv1.JobFailed)
		assert.Equal(t, executor.ReasonDeadlineExceeded, jobCondition(got, batchv1.JobFailed).Reason)
		requireGone(t, pid)
	})
	t.Run("the executor stops", func(t *testing.T) {
		f := newFixture(t)
		ex, err := executor.New(env.Config, executor.Options{RunnerPath: probe, LogDir: t.TempDir(), Namespace: f.ns})
		require.NoError(t, err)
		stop := runExecutor(t, ex)
		job, orphan := withOrphan(t, f.job("apply-1", "sleep"))
		key := create(t, job)
		waitPod(t, key, phase(corev1.PodRunning))
		waitStarted(t, f.record)
		pid := orphanPID(t, orphan)
		stop()
		requireGone(t, pid)
	})
}

// withOrphan has job's process leave a process behind; the returned file
// gets its PID.
func withOrphan(t *testing.T, job *batchv1.Job) (*batchv1.Job, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "orphan.pid")
	c := &job.Spec.Template.Spec.Containers[0]
	c.Env = append(c.Env, corev1.EnvVar{Name: "PROBE_ORPHAN_PID", Value: path})
	return job, path
}

// orphanPID waits for the orphan's PID and checks that it runs (the
// safety net: it is killed here should the executor leave it).
func orphanPID(t *testing.T, path string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(path)
		if err != nil || len(data) == 0 {
			return false
		}
		pid, err = strconv.Atoi(string(data))
		return err == nil
	}, timeout, 50*time.Millisecond, "the probe did not start its orphan")
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

// requireGone waits until process pid has ended (a zombie awaiting its
// reaper counts as ended).
func requireGone(t *testing.T, pid int) {
	t.Helper()
	require.Eventually(t, func() bool {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		// The state follows the command, which is in parentheses.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		return len(fields) > 0 && fields[0] == "Z"
	}, timeout, 50*time.Millisecond, "process %d the Pod left is still running", pid)
}
