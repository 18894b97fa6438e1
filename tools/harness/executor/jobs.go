package executor

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Finalizers the garbage collector handles on an owner being deleted.
const (
	foregroundFinalizer = metav1.FinalizerDeleteDependents
	orphanFinalizer     = metav1.FinalizerOrphanDependents
)

// legacyJobNameLabel is the job-name label the job controller still sets
// beside batch.kubernetes.io/job-name.
const legacyJobNameLabel = "job-name"

// jobController plays the job controller (one Pod per Job, status,
// deadline, TTL) and the garbage collector for the Jobs' Pods.
type jobController struct {
	client client.Client
	reader client.Reader
	opts   Options
	runs   *registry
	events events.EventRecorder
	log    logr.Logger

	// created remembers Pods created but not yet seen in the cache, so a
	// stale cache never leads to a second Pod.
	mu      sync.Mutex
	created map[types.UID]string
}

// Reconcile drives one Job.
func (j *jobController) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	job := &batchv1.Job{}
	if err := j.client.Get(ctx, req.NamespacedName, job); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, j.collectPods(ctx, req.NamespacedName)
		}
		return ctrl.Result{}, err
	}
	if !j.opts.JobSelector.Matches(labels.Set(job.Labels)) {
		return ctrl.Result{}, nil
	}
	if job.DeletionTimestamp != nil {
		return j.finalizeDeletion(ctx, job)
	}
	pods, err := j.podsOf(ctx, job)
	if err != nil {
		return ctrl.Result{}, err
	}
	if cond := jobFinished(job); cond != nil {
		j.forgetCreated(job.UID)
		if err := j.releasePods(ctx, pods); err != nil {
			return ctrl.Result{}, err
		}
		return j.expire(ctx, job, cond)
	}
	if isTrue(job.Spec.Suspend) {
		return ctrl.Result{}, nil
	}
	if j.expectingPod(job.UID, pods) {
		return ctrl.Result{}, nil
	}

	now := metav1.Now().Rfc3339Copy()
	var result ctrl.Result
	if len(pods) == 0 && job.Status.Succeeded == 0 && job.Status.Failed == 0 && job.Status.Active == 0 {
		if left, ok := deadlineLeft(job, job.Status.StartTime, now.Time); !ok || left > 0 {
			pod, retry, err := j.createPod(ctx, job)
			if err != nil {
				return ctrl.Result{}, err
			}
			if pod != nil {
				pods = append(pods, *pod)
			}
			result.RequeueAfter = retry
		}
	}

	status := computeJobStatus(job, pods, now)
	if target := jobCondition(&status, batchv1.JobFailureTarget); target != nil {
		j.stopPods(pods, target)
	}
	if !apiequality.Semantic.DeepEqual(status, job.Status) {
		j.recordTransition(job, &status)
		job.Status = status
		if err := j.client.Status().Update(ctx, job); err != nil {
			return ctrl.Result{}, err
		}
	}
	if cond := jobFinished(job); cond != nil {
		j.forgetCreated(job.UID)
		if err := j.releasePods(ctx, pods); err != nil {
			return ctrl.Result{}, err
		}
		return j.expire(ctx, job, cond)
	}
	if err := j.releasePods(ctx, terminal(pods)); err != nil {
		return ctrl.Result{}, err
	}
	if left, ok := deadlineLeft(job, job.Status.StartTime, time.Now()); ok && left > 0 {
		if result.RequeueAfter == 0 || left < result.RequeueAfter {
			result.RequeueAfter = left
		}
	}
	return result, nil
}

// createPod creates the Job's Pod from its template. A missing
// ServiceAccount makes the creation fail, as the ServiceAccount admission
// plugin would: retry says when to try again.
func (j *jobController) createPod(ctx context.Context, job *batchv1.Job) (pod *corev1.Pod, retry time.Duration, err error) {
	if sa := job.Spec.Template.Spec.ServiceAccountName; sa != "" && sa != "default" {
		err := j.reader.Get(ctx, types.NamespacedName{Namespace: job.Namespace, Name: sa}, &corev1.ServiceAccount{})
		if apierrors.IsNotFound(err) {
			j.events.Eventf(job, nil, corev1.EventTypeWarning, "FailedCreate", "Create",
				"Error creating: pods %q is forbidden: error looking up service account %s/%s: serviceaccount %q not found",
				job.Name+"-", job.Namespace, sa, sa)
			return nil, j.opts.MissingServiceAccountRetry, nil
		}
		if err != nil {
			return nil, 0, err
		}
	}
	pod = podFromTemplate(job, j.opts.NodeName)
	if err := j.client.Create(ctx, pod); err != nil {
		j.events.Eventf(job, nil, corev1.EventTypeWarning, "FailedCreate", "Create", "Error creating: %v", err)
		return nil, 0, err
	}
	j.mu.Lock()
	j.created[job.UID] = pod.Name
	j.mu.Unlock()
	j.log.Info("Created the Job's Pod", "job", client.ObjectKeyFromObject(job), "pod", pod.Name)
	j.events.Eventf(job, pod, corev1.EventTypeNormal, "SuccessfulCreate", "Create", "Created pod: %s", pod.Name)
	return pod, 0, nil
}

// podFromTemplate is the Pod the job controller makes for a Job, bound to
// node.
func podFromTemplate(job *batchv1.Job, node string) *corev1.Pod {
	t := job.Spec.Template
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    job.Name + "-",
			Namespace:       job.Namespace,
			Labels:          map[string]string{},
			Annotations:     map[string]string{},
			Finalizers:      []string{batchv1.JobTrackingFinalizer},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))},
		},
		Spec: *t.Spec.DeepCopy(),
	}
	for k, v := range t.Labels {
		pod.Labels[k] = v
	}
	for k, v := range t.Annotations {
		pod.Annotations[k] = v
	}
	pod.Labels[batchv1.JobNameLabel] = job.Name
	pod.Labels[legacyJobNameLabel] = job.Name
	pod.Labels[batchv1.ControllerUidLabel] = string(job.UID)
	pod.Spec.NodeName = node
	return pod
}

// podsOf lists the Pods the Job controls.
func (j *jobController) podsOf(ctx context.Context, job *batchv1.Job) ([]corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := j.client.List(ctx, list, client.InNamespace(job.Namespace), client.MatchingLabels{batchv1.JobNameLabel: job.Name}); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(list.Items, func(p corev1.Pod) bool { return !metav1.IsControlledBy(&p, job) }), nil
}

// expectingPod reports whether a Pod this controller created has yet to
// show in the cache.
func (j *jobController) expectingPod(uid types.UID, pods []corev1.Pod) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	name, ok := j.created[uid]
	if !ok {
		return false
	}
	for _, p := range pods {
		if p.Name == name {
			delete(j.created, uid)
			return false
		}
	}
	return true
}

func (j *jobController) forgetCreated(uid types.UID) {
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.created, uid)
}

// stopPods stops the Job's running Pods once it is bound to fail.
func (j *jobController) stopPods(pods []corev1.Pod, target *batchv1.JobCondition) {
	for i := range pods {
		p := &pods[i]
		if isPodTerminal(p) {
			continue
		}
		j.runs.stopPod(p.UID, stopRequest{Reason: target.Reason, Message: target.Message, Grace: deletionGrace(p), Failed: true})
	}
}

// releasePods removes the job-tracking finalizer from Pods whose outcome
// the Job's status has counted.
func (j *jobController) releasePods(ctx context.Context, pods []corev1.Pod) error {
	for i := range pods {
		if err := j.removeFinalizer(ctx, &pods[i], batchv1.JobTrackingFinalizer); err != nil {
			return err
		}
	}
	return nil
}

// expire deletes a finished Job whose ttlSecondsAfterFinished has passed,
// with Background propagation, as the TTL-after-finished controller does.
func (j *jobController) expire(ctx context.Context, job *batchv1.Job, finished *batchv1.JobCondition) (ctrl.Result, error) {
	if job.Spec.TTLSecondsAfterFinished == nil {
		return ctrl.Result{}, nil
	}
	at := finished.LastTransitionTime.Time
	if job.Status.CompletionTime != nil {
		at = job.Status.CompletionTime.Time
	}
	if left := time.Until(at.Add(time.Duration(*job.Spec.TTLSecondsAfterFinished) * time.Second)); left > 0 {
		return ctrl.Result{RequeueAfter: left}, nil
	}
	j.log.Info("Deleting a finished Job after its TTL", "job", client.ObjectKeyFromObject(job))
	err := j.client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &job.UID})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, err
}

// finalizeDeletion plays the garbage collector for a Job deleted with
// Foreground or Orphan propagation (the default for batch/v1 Jobs).
func (j *jobController) finalizeDeletion(ctx context.Context, job *batchv1.Job) (ctrl.Result, error) {
	pods, err := j.podsOf(ctx, job)
	if err != nil {
		return ctrl.Result{}, err
	}
	switch {
	case slices.Contains(job.Finalizers, orphanFinalizer):
		for i := range pods {
			if err := j.orphan(ctx, &pods[i], job.UID); err != nil {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{}, j.removeFinalizer(ctx, job, orphanFinalizer)
	case slices.Contains(job.Finalizers, foregroundFinalizer):
		if err := j.deletePods(ctx, pods); err != nil {
			return ctrl.Result{}, err
		}
		if len(pods) > 0 {
			return ctrl.Result{}, nil // the Pods' deletion brings us back
		}
		return ctrl.Result{}, j.removeFinalizer(ctx, job, foregroundFinalizer)
	}
	return ctrl.Result{}, nil
}

// collectPods deletes the Pods of a Job that is gone, as the garbage
// collector does after a Background deletion.
func (j *jobController) collectPods(ctx context.Context, key types.NamespacedName) error {
	list := &corev1.PodList{}
	if err := j.client.List(ctx, list, client.InNamespace(key.Namespace), client.MatchingLabels{batchv1.JobNameLabel: key.Name}); err != nil {
		return err
	}
	var pods []corev1.Pod
	for _, p := range list.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.Kind == "Job" && ref.Name == key.Name {
			pods = append(pods, p)
		}
	}
	return j.deletePods(ctx, pods)
}

// deletePods deletes Pods whose Job is going away, and releases them.
func (j *jobController) deletePods(ctx context.Context, pods []corev1.Pod) error {
	for i := range pods {
		p := &pods[i]
		if err := j.removeFinalizer(ctx, p, batchv1.JobTrackingFinalizer); err != nil {
			return err
		}
		if p.DeletionTimestamp != nil {
			continue
		}
		j.log.Info("Deleting a Pod of a deleted Job", "pod", client.ObjectKeyFromObject(p))
		err := j.client.Delete(ctx, p, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &p.UID})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	return nil
}

// orphan removes a deleted Job's owner reference and tracking finalizer
// from one of its Pods, which keeps running.
func (j *jobController) orphan(ctx context.Context, pod *corev1.Pod, owner types.UID) error {
	patch := client.MergeFromWithOptions(pod.DeepCopy(), client.MergeFromWithOptimisticLock{})
	pod.OwnerReferences = slices.DeleteFunc(pod.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == owner })
	pod.Finalizers = slices.DeleteFunc(pod.Finalizers, func(f string) bool { return f == batchv1.JobTrackingFinalizer })
	j.log.Info("Orphaning a Pod of a Job deleted with Orphan propagation", "pod", client.ObjectKeyFromObject(pod))
	err := j.client.Patch(ctx, pod, patch)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// removeFinalizer removes one finalizer from an object, if present.
func (j *jobController) removeFinalizer(ctx context.Context, obj client.Object, finalizer string) error {
	if !slices.Contains(obj.GetFinalizers(), finalizer) {
		return nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	obj.SetFinalizers(slices.DeleteFunc(obj.GetFinalizers(), func(f string) bool { return f == finalizer }))
	err := j.client.Patch(ctx, obj, patch)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// recordTransition emits the job controller's events for a status change.
func (j *jobController) recordTransition(job *batchv1.Job, next *batchv1.JobStatus) {
	for _, t := range []batchv1.JobConditionType{batchv1.JobFailureTarget, batchv1.JobComplete} {
		c := jobCondition(next, t)
		if c == nil || jobCondition(&job.Status, t) != nil {
			continue
		}
		if t == batchv1.JobComplete {
			j.events.Eventf(job, nil, corev1.EventTypeNormal, "Completed", "Complete", "Job completed")
			continue
		}
		j.events.Eventf(job, nil, corev1.EventTypeWarning, c.Reason, "Fail", "%s", c.Message)
		j.log.Info("Failing a Job", "job", client.ObjectKeyFromObject(job), "reason", c.Reason)
	}
}

// terminal returns the Pods that reached Succeeded or Failed.
func terminal(pods []corev1.Pod) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		if isPodTerminal(&p) {
			out = append(out, p)
		}
	}
	return out
}

func isTrue(b *bool) bool { return b != nil && *b }
