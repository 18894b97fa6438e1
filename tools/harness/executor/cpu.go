package executor

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// ProcessCPU is the CPU time (user and system) of the processes the
// executor ran that have ended: the containers' own processes and, apart,
// the children they waited for (for the runner: the engine).
type ProcessCPU struct {
	Containers, Children time.Duration
	// Processes is how many container processes ended.
	Processes int
}

// cpuMeter adds up the CPU time of ended processes.
type cpuMeter struct {
	mu    sync.Mutex
	total ProcessCPU
}

func (m *cpuMeter) add(self, children time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.total.Containers += self
	m.total.Children += children
	m.total.Processes++
}

func (m *cpuMeter) read() ProcessCPU {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.total
}

// ProcessCPU is the CPU time of the processes that ended so far.
func (e *Executor) ProcessCPU() ProcessCPU { return e.kubelet.cpu.read() }

// awaitExit waits until process pid has exited without reaping it and
// returns its own CPU time and that of the children it waited for, read
// from the zombie's /proc entry. ok is false when they cannot be read;
// the caller reaps the process either way.
func awaitExit(pid int) (self, children time.Duration, ok bool) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == nil {
			break
		}
		if err != unix.EINTR {
			return 0, 0, false
		}
	}
	st, err := ReadProcStat(pid)
	if err != nil {
		return 0, 0, false
	}
	return st.Self, st.Children, true
}

// ProcStat is what /proc/<pid>/stat says about a process's CPU use.
type ProcStat struct {
	Comm string
	PPID int
	// Self is the process's user and system time; Children that of the
	// children it waited for.
	Self, Children time.Duration
}

// ReadProcStat reads /proc/<pid>/stat.
func ReadProcStat(pid int) (ProcStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ProcStat{}, err
	}
	return parseProcStat(string(b))
}

// clockTicks is the unit of the times in /proc/<pid>/stat (USER_HZ),
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// parseProcStat parses a /proc/<pid>/stat line. The command name, in
// parentheses, may hold spaces: fields are counted after its closing
// parenthesis.
func parseProcStat(stat string) (ProcStat, error) {
	open, end := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return ProcStat{}, fmt.Errorf("no command name in %q", stat)
	}
	// After the name: state(3) ppid(4) ... utime(14) stime(15) cutime(16)
	// cstime(17).
	fields := strings.Fields(stat[end+1:])
	if len(fields) < 15 {
		return ProcStat{}, fmt.Errorf("too few fields in %q", stat)
	}
	var n [5]int64
	for i, f := range []string{fields[1], fields[11], fields[12], fields[13], fields[14]} {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return ProcStat{}, fmt.Errorf("field %q of %q: %w", f, stat, err)
		}
		n[i] = v
	}
	tick := time.Second / clockTicks
	return ProcStat{
		Comm:     stat[open+1 : end],
		PPID:     int(n[0]),
		Self:     time.Duration(n[1]+n[2]) * tick,
		Children: time.Duration(n[3]+n[4]) * tick,
	}, nil
}
