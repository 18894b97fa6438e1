package realnode

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupRoot is the node's own cgroup, /<name> in every cgroup hierarchy
// mounted on the machine: the kubelet creates the Pods' cgroups below it
// and the harness touches no other cgroup.
type cgroupRoot struct {
	name string
	dirs []string // the root's directory in each hierarchy
}

// cgroupMounts lists the mount points of the cgroup hierarchies (v1 and
// the v2 unified one).
func cgroupMounts() ([]string, error) {
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) >= 3 && (fields[2] == "cgroup" || fields[2] == "cgroup2") {
			out = append(out, fields[1])
		}
	}
	return out, s.Err()
}

// cgroupV1 reports whether the machine mounts cgroup v1 hierarchies.
func cgroupV1() bool {
	_, err := os.Stat("/sys/fs/cgroup/memory/memory.limit_in_bytes")
	return err == nil
}

// createCgroupRoot makes /<name> in each hierarchy, the cpuset one with its
// parent's CPUs and memory nodes (a v1 cpuset starts with none).
func createCgroupRoot(name string) (*cgroupRoot, error) {
	mounts, err := cgroupMounts()
	if err != nil {
		return nil, err
	}
	c := &cgroupRoot{name: name}
	for _, m := range mounts {
		dir := filepath.Join(m, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, errors.Join(err, c.remove())
		}
		c.dirs = append(c.dirs, dir)
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			parent, err := os.ReadFile(filepath.Join(m, f))
			if err != nil {
				continue // not the cpuset hierarchy
			}
			if err := os.WriteFile(filepath.Join(dir, f), parent, 0o644); err != nil {
				return nil, errors.Join(fmt.Errorf("setting %s of %s: %w", f, dir, err), c.remove())
			}
		}
	}
	return c, nil
}

// pids lists the processes in the root and every cgroup below it.
func (c *cgroupRoot) pids() []int {
	var out []int
	for _, d := range c.dirs {
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil || !e.IsDir() {
				return nil
			}
			b, err := os.ReadFile(filepath.Join(p, "cgroup.procs"))
			if err != nil {
				return nil
			}
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil && !slices.Contains(out, pid) {
					out = append(out, pid)
				}
			}
			return nil
		})
	}
	return out
}

// kill kills every process in the root (the Pods' containers) until none
// is left or the timeout passes.
func (c *cgroupRoot) kill(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pids := c.pids()
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %v are still in cgroup %s", pids, c.name)
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// remove deletes the root's cgroups, deepest first.
func (c *cgroupRoot) remove() error {
	if c == nil {
		return nil
	}
	var errs []error
	for _, d := range c.dirs {
		var dirs []string
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && e.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := os.Remove(dirs[i]); err != nil && !os.IsNotExist(err) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
