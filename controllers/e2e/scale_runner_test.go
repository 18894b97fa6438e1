package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/controllers/internal/setup"
)

// simulatedRunner completes the run Jobs of one namespace without running
// anything, for benchmarks of the controller at a scale where real engine
// runs would not fit on the machine. For each Job it makes the writes a
// runner makes on success through the run contract (the state lock, the
// stored plan, the state), then plays the job controller and the kubelet
// with the fewest writes that report the run: the Job's Pod, its status
// with the runner's report as termination message, and the Job Complete.
type simulatedRunner struct {
	runner, cluster *kubernetes.Clientset
	// RunnerWrites and ClusterWrites count the write requests of the
	// runner's part and of the job controller's and kubelet's part.
	RunnerWrites, ClusterWrites *writeCounter
	// Jobs is how many Jobs it completed; Errors how many it could not.
	Jobs, Errors atomic.Int64
	lastErr      atomic.Value

	// onCreate, if set, is told each Job as soon as its watch reports it
	// created, before any worker takes it on.
	onCreate atomic.Pointer[func(*batchv1.Job)]

	mu   sync.Mutex
	done map[string]bool // Job UIDs taken on
}

// OnCreate has f told each Job created from now on, as the watch reports
// it: when the controller started the run, not when a worker of this
// runner, busy with others, takes it on.
func (s *simulatedRunner) OnCreate(f func(*batchv1.Job)) { s.onCreate.Store(&f) }

// newSimulatedRunner builds the clients; start it with run.
func newSimulatedRunner(cfg *rest.Config) (*simulatedRunner, error) {
	s := &simulatedRunner{RunnerWrites: &writeCounter{}, ClusterWrites: &writeCounter{}, done: map[string]bool{}}
	var err error
	if s.runner, err = kubernetes.NewForConfig(s.RunnerWrites.wrap(cfg, "magos-runner-simulated")); err != nil {
		return nil, err
	}
	if s.cluster, err = kubernetes.NewForConfig(s.ClusterWrites.wrap(cfg, "job-controller-simulated")); err != nil {
		return nil, err
	}
	return s, nil
}

// run completes the Jobs of namespace ns with workers in parallel until ctx
// ends.
func (s *simulatedRunner) run(ctx context.Context, ns string, workers int) {
	factory := informers.NewSharedInformerFactoryWithOptions(s.cluster, 0, informers.WithNamespace(ns))
	jobs := factory.Batch().V1().Jobs()
	queue := workqueue.NewTyped[string]()
	enqueue := func(obj any) {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			queue.Add(key)
		}
	}
	_, _ = jobs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if f, job := s.onCreate.Load(), obj.(*batchv1.Job); f != nil {
				(*f)(job)
			}
			enqueue(obj)
		},
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	})
	factory.Start(ctx.Done())
	go func() {
		<-ctx.Done()
		queue.ShutDown()
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				key, quit := queue.Get()
				if quit {
					return
				}
				if obj, ok, _ := jobs.Informer().GetIndexer().GetByKey(key); ok {
					s.complete(ctx, obj.(*batchv1.Job))
				}
				queue.Done(key)
			}
		})
	}
	wg.Wait()
}

// complete runs job once, unless it finished or is being deleted.
func (s *simulatedRunner) complete(ctx context.Context, job *batchv1.Job) {
	if job.DeletionTimestamp != nil || job.Labels[magosv1.WorkspaceLabel] == "" || len(job.Spec.Template.Spec.Containers) == 0 {
		return
	}
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed {
			return
		}
	}
	s.mu.Lock()
	seen := s.done[string(job.UID)]
	s.done[string(job.UID)] = true
	s.mu.Unlock()
	if seen {
		return
	}
	res, err := s.runContract(ctx, job)
	if err == nil {
		err = s.finish(ctx, job, res)
	}
	if err != nil {
		s.Errors.Add(1)
		s.lastErr.Store(fmt.Sprintf("Job %s: %v", job.Name, err))
		return
	}
	s.Jobs.Add(1)
}

// LastError is the last error a Job met, "" if none.
func (s *simulatedRunner) LastError() string {
	v, _ := s.lastErr.Load().(string)
	return v
}

// runContract makes the runner's writes for job's phase and returns its report.
func (s *simulatedRunner) runContract(ctx context.Context, job *batchv1.Job) (magosv1.RunResult, error) {
	env := map[string]string{}
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	phase := job.Labels[magosv1.PhaseLabel]
	res := magosv1.RunResult{Phase: phase, Result: magosv1.ResultSucceeded, Reason: magosv1.ReasonSucceeded}
	spec, err := magosv1.ParseRunSpec(phase, func(k string) string { return env[k] })
	if err != nil {
		return res, fmt.Errorf("reading the run contract: %w", err)
	}
	ns, ws := job.Namespace, spec.Workspace
	lock := s.runner.CoordinationV1().Leases(ns)
	leaseName, runID := spec.LockLease, spec.RunID
	if err := setLockHolder(ctx, lock, leaseName, &runID); err != nil {
		return res, fmt.Errorf("locking the state: %w", err)
	}
	secrets := s.runner.CoreV1().Secrets(ns)
	switch phase {
	case magosv1.RunPlanApply:
		// A fast run stores its plan without JSON, then applies it.
		meta, err := planstore.Store(ctx, secrets, planstore.Input{
			Workspace: ws, Owner: planstore.WorkspaceOwner(ws, spec.WorkspaceUID), ID: spec.PlanID,
			Binary: []byte("simulated plan"), Text: []byte("Plan: 1 to add, 0 to change, 0 to destroy."),
		})
		if err != nil {
			return res, fmt.Errorf("storing the plan: %w", err)
		}
		res.PlanID, res.PlanDigest, res.Storage = meta.ID, meta.Digest, magosv1.PlanStoragePrefix(ws)
		res.Add, res.HasChanges = 1, true
		if err := putState(ctx, secrets, spec.StateSecret, spec.Revision); err != nil {
			return res, fmt.Errorf("writing the state: %w", err)
		}
	case magosv1.RunPlan:
		drift := spec.Drift
		action := "create"
		if drift {
			action = "no-op"
		}
		planJSON := fmt.Appendf(nil, `{"format_version":"1.2","revision":%q,"resource_changes":[{"address":"terraform_data.this","change":{"actions":[%q]}}]}`,
			spec.Revision, action)
		meta, err := planstore.Store(ctx, secrets, planstore.Input{
			Workspace: ws, Owner: planstore.WorkspaceOwner(ws, spec.WorkspaceUID), ID: spec.PlanID,
			JSON: planJSON, Binary: []byte("simulated plan"),
		})
		if err != nil {
			return res, fmt.Errorf("storing the plan: %w", err)
		}
		res.PlanID, res.PlanDigest, res.Storage = meta.ID, meta.Digest, magosv1.PlanStoragePrefix(ws)
		if !drift {
			res.Add, res.HasChanges = 1, true
		}
	case magosv1.RunApply:
		meta, err := planstore.Stat(ctx, secrets, ws)
		if err != nil || meta.Digest != spec.PlanDigest {
			return res, fmt.Errorf("the stored plan is not the approved one (%v)", err)
		}
		if err := putState(ctx, secrets, spec.StateSecret, spec.Revision); err != nil {
			return res, fmt.Errorf("writing the state: %w", err)
		}
	}
	if err := setLockHolder(ctx, lock, leaseName, nil); err != nil {
		return res, fmt.Errorf("unlocking the state: %w", err)
	}
	return res, nil
}

// finish plays the job controller and the kubelet: the Job's Pod, ended
// with res as its termination message, and the Job Complete.
func (s *simulatedRunner) finish(ctx context.Context, job *batchv1.Job, res magosv1.RunResult) error {
	res.Contract, res.RunnerVersion = magosv1.RunContractMajor, setup.Version
	msg, err := json.Marshal(res)
	if err != nil {
		return err
	}
	now := metav1.Now()
	t := job.Spec.Template
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: job.Name + "-sim", Namespace: job.Namespace, Labels: map[string]string{}, Annotations: t.Annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))},
		},
		Spec: *t.Spec.DeepCopy(),
	}
	for k, v := range t.Labels {
		pod.Labels[k] = v
	}
	pod.Labels[batchv1.JobNameLabel] = job.Name
	pod.Labels[batchv1.ControllerUidLabel] = string(job.UID)
	pod.Spec.NodeName = "simulated"
	pods := s.cluster.CoreV1().Pods(job.Namespace)
	if pod, err = pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the Pod: %w", err)
	}
	c := pod.Spec.Containers[0]
	pod.Status = corev1.PodStatus{
		Phase: corev1.PodSucceeded, StartTime: &now,
		ContainerStatuses: []corev1.ContainerStatus{{Name: c.Name, Image: c.Image, ImageID: c.Image, ContainerID: "simulated://" + string(pod.UID),
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", Message: string(msg), StartedAt: now, FinishedAt: now,
			}}}},
	}
	if _, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("ending the Pod: %w", err)
	}
	job = job.DeepCopy()
	zero := int32(0)
	job.Status = batchv1.JobStatus{
		StartTime: &now, CompletionTime: &now, Succeeded: 1, Ready: &zero, Terminating: &zero,
		UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{},
		Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastProbeTime: now, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastProbeTime: now, LastTransitionTime: now},
		},
	}
	if _, err := s.cluster.BatchV1().Jobs(job.Namespace).UpdateStatus(ctx, job, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("completing the Job: %w", err)
	}
	return nil
}

// setLockHolder takes (holder set) or releases (nil) the state lock Lease
// as the runner's state backend does: a read, then an update.
func setLockHolder(ctx context.Context, leases coordinationv1client.LeaseInterface, name string, holder *string) error {
	lease, err := leases.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	lease.Spec.HolderIdentity, lease.Spec.AcquireTime = holder, nil
	if holder != nil {
		now := metav1.NowMicro()
		lease.Spec.AcquireTime = &now
	}
	_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	return err
}

// putState writes a small gzip'd state into the state Secret, as the
// runner's state backend does after an apply: a read, then an update.
func putState(ctx context.Context, secrets corev1client.SecretInterface, name, revision string) error {
	sec, err := secrets.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = fmt.Fprintf(zw, `{"version":4,"serial":1,"lineage":"simulated","outputs":{},"resources":[{"mode":"managed","type":"terraform_data","name":"this","instances":[{"attributes":{"input":%q}}]}]}`, revision)
	if err := zw.Close(); err != nil {
		return err
	}
	if sec.Data == nil {
		sec.Data = map[string][]byte{}
	}
	if sec.Annotations == nil {
		sec.Annotations = map[string]string{}
	}
	sec.Annotations["encoding"] = "gzip"
	sec.Data[magosv1.StateKey] = buf.Bytes()
	_, err = secrets.Update(ctx, sec, metav1.UpdateOptions{})
	return err
}

// writeCounter counts the write requests (POST, PUT, PATCH, DELETE) of the
// clients it wraps.
type writeCounter struct{ n atomic.Int64 }

// Load is the writes counted so far.
func (w *writeCounter) Load() int64 { return w.n.Load() }

// wrap is cfg with a high client-side rate limit, agent as its user agent,
// and every write counted.
func (w *writeCounter) wrap(cfg *rest.Config, agent string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst, c.UserAgent = 1000, 2000, agent
	c.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			switch req.Method {
			case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
				w.n.Add(1)
			}
			return rt.RoundTrip(req)
		})
	}
	return c
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// scaleTimeout bounds each wait of the scale benchmark: generous, as the
// machine may be shared.
func scaleTimeout(n int) time.Duration { return 20*time.Minute + time.Duration(n)*300*time.Millisecond }
