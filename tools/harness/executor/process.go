package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// runPod runs a Pod's container to its end and reports it. It reports
// nothing when the executor stops first: the process is killed and the Pod
// is left as a lost container.
func (k *kubelet) runPod(ctx context.Context, r *run, pod *corev1.Pod) {
	defer k.runs.wg.Done()
	defer close(r.done)
	out, ok := k.execute(ctx, r, pod)
	if !ok {
		return
	}
	now := metav1.Now().Rfc3339Copy()
	err := k.updatePodStatus(ctx, r.pod, r.uid, func(st *corev1.PodStatus) { setFinished(st, out, now) })
	if err != nil && !apierrors.IsNotFound(err) {
		k.log.Error(err, "Writing the final Pod status", "pod", r.pod)
	}
}

// execute resolves the environment, runs the process and returns how the
// Pod ended; ok is false when the executor is stopping.
func (k *kubelet) execute(ctx context.Context, r *run, pod *corev1.Pod) (out podOutcome, ok bool) {
	c := &pod.Spec.Containers[0]
	dirs, err := k.prepareDirs(ctx, pod)
	if err != nil {
		return failedToStart(err), true
	}
	if !k.opts.KeepWorkDirs {
		defer os.RemoveAll(dirs.base)
	}
	if initOut, ok := k.runInitContainers(ctx, r, pod, dirs.volumes); initOut != nil || !ok {
		return *initOut, ok
	}
	if k.unpullable(c.Image) {
		return k.waitForPull(ctx, r, pod, c.Name)
	}
	env, out, ok := k.resolveWithRetries(ctx, r, pod, c)
	if env == nil {
		return out, ok
	}

	mounts, err := mountVolumes(ctx, k.reader, podTokens(k.client, pod), pod, c, dirs.volumes)
	if err != nil {
		return podOutcome{Failed: true, Reason: ReasonFailedMount, Message: err.Error()}, true
	}
	for i := range env.vars {
		env.vars[i].Value = mapPath(mounts, env.vars[i].Value)
	}
	full := k.processEnv(pod, env, dirs)
	args := make([]string, 0, len(c.Command)+len(c.Args))
	if len(c.Command) > 1 {
		args = append(args, c.Command[1:]...)
	}
	args = append(args, c.Args...)
	for i := range args {
		args[i] = mapPath(mounts, expand(args[i], full.Get))
	}

	log := logPath(k.opts.LogDir, pod.Namespace, pod.Name)
	logFile, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return failedToStart(err), true
	}
	defer logFile.Close()
	var output io.Writer = logFile
	if k.logOutput != nil {
		pw := &prefixWriter{out: k.logOutput, prefix: []byte(pod.Namespace + "/" + pod.Name + ": ")}
		defer pw.Close()
		output = io.MultiWriter(logFile, pw)
	}

	release, ok := k.acquireSlot(ctx, r)
	if !ok {
		return out, false
	}
	defer release()
	if s := r.stopRequested(); s != nil {
		return podOutcome{Failed: true, Reason: s.Reason, Message: s.Message}, true
	}
	cmd := exec.Command(k.opts.RunnerPath, args...)
	cmd.Env = append(full.Environ(), podMarker(r.uid))
	cmd.Dir = dirs.work
	cmd.Stdout, cmd.Stderr = output, output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 5 * time.Second
	k.log.Info("Starting the Pod's process", "pod", r.pod, "runner", k.opts.RunnerPath, "args", args)
	if err := cmd.Start(); err != nil {
		return failedToStart(err), true
	}
	startedAt := metav1.Now().Rfc3339Copy()
	containerID := "local://" + strconv.Itoa(cmd.Process.Pid)
	k.events.Eventf(pod, nil, corev1.EventTypeNormal, "Started", "Start", "Started container %s", c.Name)
	if err := k.updatePodStatus(ctx, r.pod, r.uid, func(st *corev1.PodStatus) { setRunning(st, containerID, startedAt) }); err != nil {
		k.log.Error(err, "Writing the running Pod status", "pod", r.pod)
	}

	stop, ok := k.wait(ctx, r, cmd, pod)
	if !ok {
		return podOutcome{}, false
	}
	exitCode, signal := exitStatus(cmd.ProcessState)
	term := &corev1.ContainerStateTerminated{
		ExitCode:    exitCode,
		Signal:      signal,
		Reason:      "Completed",
		Message:     terminationMessage(dirs.termination, c.TerminationMessagePolicy, exitCode, log),
		StartedAt:   startedAt,
		FinishedAt:  metav1.Now().Rfc3339Copy(),
		ContainerID: containerID,
	}
	if exitCode != 0 {
		term.Reason = "Error"
	}
	out = podOutcome{Terminated: term}
	if stop != nil {
		out.Failed, out.Reason, out.Message = stop.Failed, stop.Reason, stop.Message
		if stop.Reason != "" {
			term.Reason = stop.Reason
		}
	}
	return out, true
}

// wait waits for the process to end, signalling its process group on stop
// requests. It returns the stop request that ended it, if any; ok is false
// when the executor stopped (the process is then killed). Once the process
// has ended, whatever it started and left running is killed, as a node
// ends a container's every process with it.
func (k *kubelet) wait(ctx context.Context, r *run, cmd *exec.Cmd, pod *corev1.Pod) (stop *stopRequest, ok bool) {
	defer func() {
		if n := killLeftovers(r.uid); n > 0 {
			k.log.Info("Killed processes the Pod's process left running", "pod", r.pod, "processes", n)
		}
	}()
	exited := make(chan struct{})
	go func() {
		if self, children, ok := awaitExit(cmd.Process.Pid); ok {
			k.cpu.add(self, children)
		}
		_ = cmd.Wait()
		close(exited)
	}()
	signal := func(sig syscall.Signal) { _ = syscall.Kill(-cmd.Process.Pid, sig) }
	stopped := r.stopped
	var killAfter <-chan time.Time
	for {
		select {
		case <-exited:
			return stop, true
		case <-ctx.Done():
			signal(syscall.SIGKILL)
			<-exited
			return nil, false
		case <-stopped:
			stopped = nil
			stop = r.stopRequested()
			k.events.Eventf(pod, nil, corev1.EventTypeNormal, "Killing", "Kill", "Stopping container %s: %s", pod.Spec.Containers[0].Name, stop.Reason)
			if stop.Kill {
				signal(syscall.SIGKILL)
				continue
			}
			signal(syscall.SIGTERM)
			killAfter = time.After(stop.Grace)
		case <-r.escalate:
			stop = r.stopRequested()
			signal(syscall.SIGKILL)
		case <-killAfter:
			signal(syscall.SIGKILL)
		}
	}
}

// resolveWithRetries resolves the container's environment; while it cannot
// (CreateContainerConfigError) it reports the error on the Pod and retries.
// A nil env comes with the outcome to report.
func (k *kubelet) resolveWithRetries(ctx context.Context, r *run, pod *corev1.Pod, c *corev1.Container) (env *envList, out podOutcome, ok bool) {
	for attempt := 1; ; attempt++ {
		if s := r.stopRequested(); s != nil {
			return nil, podOutcome{Failed: true, Reason: s.Reason, Message: s.Message}, true
		}
		err := checkVolumes(ctx, k.reader, pod, c)
		if err == nil {
			if env, err = resolveEnv(ctx, k.reader, pod, c); err == nil {
				return env, podOutcome{}, true
			}
		}
		var cfgErr *configError
		if errors.As(err, &cfgErr) {
			msg := err.Error()
			waiting, final, event := ReasonCreateContainerConfigError, ReasonCreateContainerConfigError, "Failed"
			if cfgErr.mount {
				waiting, final, event = ReasonContainerCreating, ReasonFailedMount, ReasonFailedMount
			}
			k.events.Eventf(pod, nil, corev1.EventTypeWarning, event, "Start", "Error: %s", msg)
			if err := k.updatePodStatus(ctx, r.pod, r.uid, func(st *corev1.PodStatus) {
				setWaiting(st, waiting, msg)
			}); err != nil && ctx.Err() == nil {
				k.log.Error(err, "Writing the Pod status", "pod", r.pod)
			}
			if retries := *k.opts.ConfigErrorRetries; retries >= 0 && attempt > retries {
				return nil, podOutcome{Failed: true, Reason: final, Message: msg}, true
			}
		} else if ctx.Err() == nil {
			k.log.Error(err, "Resolving the container environment", "pod", r.pod)
		}
		select {
		case <-ctx.Done():
			return nil, podOutcome{}, false
		case <-r.stopped:
		case <-time.After(k.opts.ConfigErrorInterval):
		}
	}
}

// podDirs are a Pod's scratch paths.
type podDirs struct {
	base, home, tmp, work, volumes, termination, kubeconfig string
}

// prepareDirs creates a Pod's scratch directories, its empty termination
// message file and its impersonating kubeconfig.
func (k *kubelet) prepareDirs(ctx context.Context, pod *corev1.Pod) (podDirs, error) {
	base, err := os.MkdirTemp(k.opts.WorkRoot, fmt.Sprintf("magos-pod-%s-%s-", pod.Namespace, pod.Name))
	if err != nil {
		return podDirs{}, err
	}
	d := podDirs{
		base:        base,
		home:        filepath.Join(base, "home"),
		tmp:         filepath.Join(base, "tmp"),
		work:        filepath.Join(base, "work"),
		volumes:     filepath.Join(base, "volumes"),
		termination: filepath.Join(base, "termination-log"),
		kubeconfig:  filepath.Join(base, "kubeconfig"),
	}
	for _, dir := range []string{d.home, d.tmp, d.work, d.volumes} {
		if err := os.Mkdir(dir, 0o700); err != nil {
			return d, err
		}
	}
	if err := os.WriteFile(d.termination, nil, 0o600); err != nil {
		return d, err
	}
	var saUID types.UID
	sa := &corev1.ServiceAccount{}
	if err := k.reader.Get(ctx, types.NamespacedName{Namespace: pod.Namespace, Name: serviceAccountName(pod)}, sa); err == nil {
		saUID = sa.UID
	}
	return d, WriteKubeconfig(d.kubeconfig, k.cfg, podIdentity(pod, saUID), pod.Namespace)
}

// processEnv is the process's environment: PATH and HOSTNAME, the
// container's variables, Options.Env, then the executor's own paths.
func (k *kubelet) processEnv(pod *corev1.Pod, container *envList, d podDirs) *envList {
	full := &envList{}
	full.Set("PATH", os.Getenv("PATH"))
	full.Set("HOSTNAME", pod.Name)
	for _, v := range container.vars {
		full.Set(v.Name, v.Value)
	}
	for _, name := range slices.Sorted(maps.Keys(k.opts.Env)) {
		full.Set(name, k.opts.Env[name])
	}
	full.Set("HOME", d.home)
	full.Set("TMPDIR", d.tmp)
	full.Set(magosv1.EnvWorkDir, d.work)
	full.Set(magosv1.EnvTerminationMessage, d.termination)
	full.Set("KUBECONFIG", d.kubeconfig)
	full.Set("KUBE_CONFIG_PATH", d.kubeconfig)
	return full
}

// failedToStart is the outcome of a container the executor could not start.
func failedToStart(err error) podOutcome {
	now := metav1.Now().Rfc3339Copy()
	return podOutcome{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: 128, Reason: ReasonStartError, Message: err.Error(), StartedAt: now, FinishedAt: now},
		Failed:     true,
	}
}

// exitStatus is the container's exit code as a runtime reports it: 128+N
// for a process killed by signal N.
func exitStatus(ps *os.ProcessState) (exitCode, signal int32) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int32(ws.Signal()), int32(ws.Signal())
	}
	return int32(ps.ExitCode()), 0
}

// acquireSlot waits for one of Options.MaxProcesses to be free and returns
// its release; a stop request ends the wait with a slot-less release (the
// caller then reports the stop). ok is false when the executor stops.
func (k *kubelet) acquireSlot(ctx context.Context, r *run) (release func(), ok bool) {
	if k.slots == nil {
		return func() {}, true
	}
	select {
	case k.slots <- struct{}{}:
		return func() { <-k.slots }, true
	case <-r.stopped:
		return func() {}, true
	case <-ctx.Done():
		return nil, false
	}
}
