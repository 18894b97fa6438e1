// Package executor is a local stand-in for the job controller and the
// kubelet, for control planes that have neither (the test environment and
// `make demo`). It runs Magos Jobs as processes on this machine:
//
//   - as the job controller, it creates one Pod per Job from the Job's
//     template (bound to the node "local", with the job-tracking finalizer),
//     keeps the Job's status (startTime, active, ready, succeeded, failed,
//     conditions) the way the job controller does for a Job with one
//     completion and no retries, enforces activeDeadlineSeconds, deletes
//     finished Jobs after ttlSecondsAfterFinished, and plays the garbage
//     collector for the Jobs' Pods (Background, Foreground and Orphan
//     deletion);
//   - as the kubelet, it resolves the container's environment exactly as
//     the kubelet does (value with $(VAR) expansion, valueFrom secretKeyRef,
//     configMapKeyRef and fieldRef, envFrom; a missing required Secret or key
//     is a CreateContainerConfigError), writes its Secret, ConfigMap and
//     projected volumes to local directories and maps the mount paths found
//     in env values and arguments (whole values, or words of a command line
//     such as GIT_SSH_COMMAND) to them, then runs one binary (the image
//     is ignored) with the container's arguments, with KUBECONFIG pointing at a
//     kubeconfig that impersonates the Pod's ServiceAccount, so the real
//     apiserver enforces the Pod's RBAC; it reports the container's state and
//     termination message in the Pod's status and honours graceful deletion.
//
// Init containers are imitated, not run: the engine image's installer (see
// apis/magos/v1alpha1/engine_image.go) becomes hard links (or copies) of
// Options.EnginesDir/<engine>/<version> in a local directory
// that stands in for the emptyDir volume, mapped into the runner's paths
// like any other volume; the read-only mount is not enforced. An image
// listed in Options.UnpullableImages is never started: its container waits
// in ErrImagePull, then ImagePullBackOff, as under a kubelet that cannot
// pull it, until the Pod is deleted or the Job's deadline passes. The
// real-node test tier runs the real engine image under a real kubelet.
//
// A process that disappears without its status being reported (the
// executor was stopped or crashed) is never started again: a restarted
// executor marks its Pod Failed with reason ExecutorRestarted, as a real
// node that lost a container would. Tests can also kill a run's process
// abruptly with Kill, as if its node died. When a process ends, or is
// stopped at its deadline or with the executor, whatever it started and
// left running ends too, also in a session of its own, as a container's
// processes end with its cgroup (leftovers.go).
//
//	ex, err := executor.New(env.Config, executor.Options{RunnerPath: "bin/runner", Namespace: ns})
//	go ex.Start(ctx)
package executor
