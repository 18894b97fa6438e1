package executor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Executor runs Jobs' Pods as local processes. It is started once.
type Executor struct {
	opts    Options
	mgr     manager.Manager
	runs    *registry
	kubelet *kubelet
	started atomic.Bool
}

// New prepares an Executor that reaches the apiserver with cfg, which must
// be allowed to impersonate ServiceAccounts (a cluster admin is).
func New(cfg *rest.Config, opts Options) (*Executor, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))

	podReq, err := labels.NewRequirement(batchv1.JobNameLabel, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	cacheOpts := cache.Options{
		ByObject: map[client.Object]cache.ByObject{
			&batchv1.Job{}: {Label: opts.JobSelector},
			&corev1.Pod{}:  {Label: labels.NewSelector().Add(*podReq)},
		},
	}
	if opts.Namespace != "" {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{opts.Namespace: {}}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Cache:                  cacheOpts,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Logger:                 *opts.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("executor: %w", err)
	}

	e := &Executor{opts: opts, mgr: mgr, runs: newRegistry()}
	recorder := mgr.GetEventRecorder("local-executor")
	e.kubelet = &kubelet{
		client: mgr.GetClient(), reader: mgr.GetAPIReader(), cfg: rest.CopyConfig(cfg),
		opts: opts, runs: e.runs, events: recorder, log: opts.Logger.WithName("kubelet"),
	}
	if opts.MaxProcesses > 0 {
		e.kubelet.slots = make(chan struct{}, opts.MaxProcesses)
	}
	if opts.LogOutput != nil {
		e.kubelet.logOutput = &lockedWriter{w: opts.LogOutput}
	}
	jobs := &jobController{
		client: mgr.GetClient(), reader: mgr.GetAPIReader(), opts: opts, runs: e.runs,
		events: recorder, log: opts.Logger.WithName("jobs"), created: map[types.UID]string{},
	}
	skip := true
	onNode := predicate.NewPredicateFuncs(func(o client.Object) bool {
		pod, ok := o.(*corev1.Pod)
		return ok && pod.Spec.NodeName == opts.NodeName
	})
	if err := ctrl.NewControllerManagedBy(mgr).Named("executor-kubelet").
		For(&corev1.Pod{}, builder.WithPredicates(onNode)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4, SkipNameValidation: &skip}).
		Complete(e.kubelet); err != nil {
		return nil, fmt.Errorf("executor: %w", err)
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named("executor-jobs").
		For(&batchv1.Job{}).
		Owns(&corev1.Pod{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4, SkipNameValidation: &skip}).
		Complete(jobs); err != nil {
		return nil, fmt.Errorf("executor: %w", err)
	}
	return e, nil
}

// Start runs the executor until ctx is done. Processes still running then
// are killed without their Pods being reported, as if the node died; a
// later executor fails those Pods (ExecutorRestarted). Start returns once
// every process has ended.
func (e *Executor) Start(ctx context.Context) error {
	if !e.started.CompareAndSwap(false, true) {
		return errors.New("executor: already started")
	}
	e.kubelet.ctx = ctx
	err := e.mgr.Start(ctx)
	e.runs.wg.Wait()
	if e.opts.ownLogDir {
		_ = os.RemoveAll(e.opts.LogDir)
	}
	return err
}

// Kill kills the processes of a Job's Pods with SIGKILL, as if their node
// died: the Pods are reported Failed with reason NodeLost, and so the Job
// fails. It fails when the Job has no process running here.
func (e *Executor) Kill(namespace, job string) error {
	runs := e.runs.runningForJob(types.NamespacedName{Namespace: namespace, Name: job})
	if len(runs) == 0 {
		return fmt.Errorf("executor: no process running for Job %s/%s", namespace, job)
	}
	for _, r := range runs {
		r.requestStop(stopRequest{Reason: ReasonNodeLost, Message: "The node running the Pod was lost; its process was killed", Kill: true, Failed: true})
	}
	return nil
}

// Options returns the options in force, defaults filled in.
func (e *Executor) Options() Options { return e.opts }
