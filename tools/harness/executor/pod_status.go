package executor

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Reasons the executor writes into Pod and container statuses.
const (
	// ReasonCreateContainerConfigError: the container's environment could
	// not be resolved (a missing Secret, ConfigMap or key), as the kubelet
	// reports it.
	ReasonCreateContainerConfigError = "CreateContainerConfigError"
	// ReasonFailedMount: a Secret or ConfigMap volume could not be mounted
	// (the Pod's reason once the executor gives up; the container waits
	// in ContainerCreating meanwhile, as with the kubelet).
	ReasonFailedMount = "FailedMount"
	// ReasonContainerCreating: the container is being prepared.
	ReasonContainerCreating = "ContainerCreating"
	// ReasonDeadlineExceeded: the Job's activeDeadlineSeconds passed and its
	// process was stopped.
	ReasonDeadlineExceeded = "DeadlineExceeded"
	// ReasonNodeLost: the process was killed by Kill, as if its node died.
	ReasonNodeLost = "NodeLost"
	// ReasonExecutorRestarted: the Pod's process was lost because the
	// executor stopped while it ran; a restarted executor fails the Pod
	// rather than starting the process a second time.
	ReasonExecutorRestarted = "ExecutorRestarted"
	// ReasonStartError: the binary could not be started.
	ReasonStartError = "StartError"
	// ReasonContainerStatusUnknown is the kubelet's reason for a container
	// whose fate it could not observe.
	ReasonContainerStatusUnknown = "ContainerStatusUnknown"
)

// localIP is the Pod and host IP of every Pod the executor runs.
const localIP = "127.0.0.1"

// MaxTerminationMessageBytes is how much of a termination message the
// kubelet keeps.
const MaxTerminationMessageBytes = 4096

// Fallback to logs on error: the kubelet uses the last lines of the log,
// bounded in lines and bytes.
const (
	fallbackLogLines = 80
	fallbackLogBytes = 2048
)

// isPodTerminal reports whether the Pod reached Succeeded or Failed.
func isPodTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// wasStarted reports whether some executor already took the Pod on: it
// writes the Pod's startTime before it starts anything.
func wasStarted(pod *corev1.Pod) bool {
	return pod.Status.StartTime != nil || len(pod.Status.ContainerStatuses) > 0
}

// isPodReady reports whether the Pod's Ready condition is True.
func isPodReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// startingStatus is the status of a Pod the executor has taken on but whose
// container has not started: Pending, each container ContainerCreating.
func startingStatus(pod *corev1.Pod, now metav1.Time) corev1.PodStatus {
	st := corev1.PodStatus{
		Phase:     corev1.PodPending,
		HostIP:    localIP,
		HostIPs:   []corev1.HostIP{{IP: localIP}},
		PodIP:     localIP,
		PodIPs:    []corev1.PodIP{{IP: localIP}},
		StartTime: &now,
		QOSClass:  pod.Status.QOSClass,
	}
	setPodCondition(&st, corev1.PodScheduled, corev1.ConditionTrue, "", now)
	setPodCondition(&st, corev1.PodReadyToStartContainers, corev1.ConditionTrue, "", now)
	setPodCondition(&st, corev1.ContainersReady, corev1.ConditionFalse, "ContainersNotReady", now)
	setPodCondition(&st, corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady", now)
	waiting := ReasonContainerCreating
	if len(pod.Spec.InitContainers) > 0 {
		waiting = ReasonPodInitializing
		setPodCondition(&st, corev1.PodInitialized, corev1.ConditionFalse, "ContainersNotInitialized", now)
		st.InitContainerStatuses = waitingStatuses(pod.Spec.InitContainers, ReasonPodInitializing)
	} else {
		setPodCondition(&st, corev1.PodInitialized, corev1.ConditionTrue, "", now)
	}
	st.ContainerStatuses = waitingStatuses(pod.Spec.Containers, waiting)
	return st
}

// waitingStatuses are the statuses of containers that wait for reason.
func waitingStatuses(containers []corev1.Container, reason string) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for _, c := range containers {
		out = append(out, corev1.ContainerStatus{
			Name:  c.Name,
			Image: c.Image,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}},
		})
	}
	return out
}

// setInitTerminated records how init container name ended.
func setInitTerminated(st *corev1.PodStatus, name string, term *corev1.ContainerStateTerminated) {
	for i := range st.InitContainerStatuses {
		if cs := &st.InitContainerStatuses[i]; cs.Name == name {
			cs.Ready = term.ExitCode == 0
			cs.Started = new(false)
			cs.State = corev1.ContainerState{Terminated: term}
		}
	}
}

// setInitialized marks the init containers done: the Pod is Initialized and
// its containers are being created.
func setInitialized(st *corev1.PodStatus, now metav1.Time) {
	setPodCondition(st, corev1.PodInitialized, corev1.ConditionTrue, "", now)
	for i := range st.ContainerStatuses {
		st.ContainerStatuses[i].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: ReasonContainerCreating}}
	}
}

// setContainerWaiting sets the waiting state of the init or main container name.
func setContainerWaiting(st *corev1.PodStatus, name, reason, message string) {
	for _, statuses := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for i := range statuses {
			if statuses[i].Name == name {
				statuses[i].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
			}
		}
	}
}

// setWaiting sets the first container's waiting state.
func setWaiting(st *corev1.PodStatus, reason, message string) {
	if len(st.ContainerStatuses) == 0 {
		return
	}
	st.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
}

// setRunning marks the first container running and the Pod Running and Ready.
func setRunning(st *corev1.PodStatus, containerID string, startedAt metav1.Time) {
	st.Phase = corev1.PodRunning
	if len(st.ContainerStatuses) > 0 {
		cs := &st.ContainerStatuses[0]
		cs.ContainerID = containerID
		cs.Started = new(true)
		cs.Ready = true
		cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: startedAt}}
	}
	setPodCondition(st, corev1.ContainersReady, corev1.ConditionTrue, "", startedAt)
	setPodCondition(st, corev1.PodReady, corev1.ConditionTrue, "", startedAt)
}

// podOutcome is how a Pod ended.
type podOutcome struct {
	// Terminated is the first container's final state; nil when it never
	// started (its waiting state is kept).
	Terminated *corev1.ContainerStateTerminated
	// Failed forces the Failed phase whatever the exit code.
	Failed bool
	// Reason and Message go to the Pod's status.reason and status.message.
	Reason, Message string
}

// setFinished writes a Pod's terminal status: Succeeded when its container
// exited 0 (and nothing forced a failure), else Failed.
func setFinished(st *corev1.PodStatus, out podOutcome, now metav1.Time) {
	st.Phase = corev1.PodFailed
	if !out.Failed && out.Terminated != nil && out.Terminated.ExitCode == 0 {
		st.Phase = corev1.PodSucceeded
	}
	st.Reason, st.Message = out.Reason, out.Message
	if len(st.ContainerStatuses) > 0 {
		cs := &st.ContainerStatuses[0]
		cs.Ready = false
		cs.Started = new(false)
		if out.Terminated != nil {
			cs.State = corev1.ContainerState{Terminated: out.Terminated}
		}
	}
	reason := "PodFailed"
	if st.Phase == corev1.PodSucceeded {
		reason = "PodCompleted"
	}
	setPodCondition(st, corev1.PodReadyToStartContainers, corev1.ConditionFalse, "", now)
	setPodCondition(st, corev1.ContainersReady, corev1.ConditionFalse, reason, now)
	setPodCondition(st, corev1.PodReady, corev1.ConditionFalse, reason, now)
}

// setPodCondition sets a condition, keeping its transition time when its
// status does not change.
func setPodCondition(st *corev1.PodStatus, t corev1.PodConditionType, s corev1.ConditionStatus, reason string, now metav1.Time) {
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type != t {
			continue
		}
		if c.Status != s {
			c.LastTransitionTime = now
		}
		c.Status, c.Reason = s, reason
		return
	}
	st.Conditions = append(st.Conditions, corev1.PodCondition{Type: t, Status: s, Reason: reason, LastTransitionTime: now})
}
