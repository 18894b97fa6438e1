package workspace

import (
	"context"
	"flag"
	"fmt"
	"net"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/magos-dev/magos/apis/artifactdigest"
	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/artifactproxy"
	"github.com/magos-dev/magos/controllers/internal/configtree/treecache"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
	"github.com/magos-dev/magos/controllers/internal/index"
	"github.com/magos-dev/magos/controllers/internal/metrics"
	"github.com/magos-dev/magos/controllers/internal/policy"
	"github.com/magos-dev/magos/controllers/internal/runqueue"
	"github.com/magos-dev/magos/controllers/internal/setup"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
	"github.com/magos-dev/magos/controllers/internal/workspace/schedule"
)

// +kubebuilder:rbac:groups=magos.dev,resources=workspaces,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=magos.dev,resources=workspaces/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=magos.dev,resources=workspaces/finalizers,verbs=update
// +kubebuilder:rbac:groups=magos.dev,resources=projects;variablesets;rollouts,verbs=get;list;watch
// +kubebuilder:rbac:groups=source.toolkit.fluxcd.io,resources=gitrepositories;ocirepositories;buckets;externalartifacts,verbs=get;list;watch
// +kubebuilder:rbac:groups=policies.kyverno.io,resources=validatingpolicies;namespacedvalidatingpolicies;policyexceptions,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get
// The artifact proxy authenticates runners by their Pod-bound tokens:
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// Runner identities are read live, not cached; Roles are watched for their metadata:
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;create;update;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=get;create;update;patch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles,verbs=get;list;watch;create;update;patch
// The runner Role grants these on named objects, so the controller holds them too:
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;update;patch;delete
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update;patch;delete

// Controller is the workspace-controller's entry for setup.Run.
type Controller struct {
	Options config.Options
}

// NewController returns the workspace-controller.
func NewController() *Controller { return &Controller{} }

// BindFlags registers the workspace-controller's own flags.
func (c *Controller) BindFlags(fs *flag.FlagSet) { c.Options.BindFlags(fs) }

// Register wires the Workspace reconciler into mgr.
func (c *Controller) Register(mgr ctrl.Manager, opts setup.Options) error {
	if err := c.Options.Validate(); err != nil {
		return err
	}
	if err := checkPolicySandbox(context.Background(), c.Options); err != nil {
		return err
	}
	// The policy engine runs in its own process, started on first use, so
	// a controller whose Workspaces no policy selects never loads it.
	evaluator := policy.NewEngineClient(c.Options.PolicyEngine())
	if c.Options.PolicyTimeout > 0 {
		evaluator.Timeout = c.Options.PolicyTimeout
	}
	if err := mgr.Add(stopOnShutdown{evaluator}); err != nil {
		return err
	}
	if err := addArtifactProxy(mgr, c.Options); err != nil {
		return err
	}
	if err := mgr.Add(metrics.ObjectSource(magosv1.WorkspaceKind, workspaceSeries, mgr.GetCache())); err != nil {
		return err
	}
	rec, err := setup.EventRecorder(mgr, "workspace", opts)
	if err != nil {
		return err
	}
	r := &Reconciler{
		Policies:  evaluator,
		Client:    mgr.GetClient(),
		Events:    rec,
		Options:   c.Options,
		APIReader: mgr.GetAPIReader(),
		Shard:     opts.WatchLabelSelector,
		Trees:     &treecache.Cache{Client: c.Options.ArtifactHosts.Client(time.Minute), MaxBytes: artifactdigest.MaxArtifactBytes},
	}
	if l, rate := c.Options.RunLimits(), c.Options.PlanRate(); l != (runqueue.Limits{}) || rate != nil {
		r.Runs = schedule.New(l, c.Options.RequestedPlanInterval, rate)
	}
	if err := indexSourceRefs(mgr); err != nil {
		return err
	}
	if err := index.AddWorkspaceDependsOn(mgr); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("workspace").
		For(&magosv1.Workspace{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&magosv1.Workspace{}, handler.EnqueueRequestsFromMapFunc(r.dependencyRequests), builder.WithPredicates(readinessChanged)).
		Owns(&batchv1.Job{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(workspaceOfPod), builder.WithPredicates(runnerPodEvents)).
		Owns(&rbacv1.Role{}, builder.OnlyMetadata, builder.WithPredicates(predicate.AnnotationChangedPredicate{})).
		Watches(&magosv1.Project{}, handler.EnqueueRequestsFromMapFunc(r.workspacesInNamespace), builder.WithPredicates(projectChangedForMembers)).
		Watches(&magosv1.VariableSet{}, handler.EnqueueRequestsFromMapFunc(r.workspacesInNamespace)).
		Watches(&magosv1.Rollout{}, r.rolloutHandler()).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.Concurrency})
	if r.Runs != nil {
		b = b.WatchesRawSource(r.Runs.Source())
	}
	ctl, err := b.Build(r)
	if err != nil {
		return err
	}
	optional := fluxsource.OptionalWatches(r.workspacesForSource,
		"Workspaces whose sourceRef is a %s wait (SourceNotReady) until Flux's CRDs are installed")
	for _, kind := range policy.Kinds {
		optional = append(optional, setup.OptionalWatch{
			Kind:       kind,
			Handler:    handler.EnqueueRequestsFromMapFunc(r.workspacesWithPendingPlans),
			Predicates: []predicate.Predicate{policyChanged},
			Lacking:    "no " + kind.Kind + " is evaluated until Kyverno's CRDs are installed",
		})
	}
	optional = append(optional, setup.OptionalWatch{
		Kind:       policy.ExceptionKind,
		Handler:    handler.EnqueueRequestsFromMapFunc(r.workspacesWithPendingPlans),
		Predicates: []predicate.Predicate{predicate.GenerationChangedPredicate{}},
		Lacking:    "no PolicyException waives a denial until Kyverno's CRDs are installed",
	})
	return setup.WatchWhenServed(mgr, ctl, "workspace", optional, setup.OptionalKindInterval)
}

// stopOnShutdown stops the policy engine when the manager stops, on every
// replica (leader or not).
type stopOnShutdown struct{ engine *policy.EngineClient }

func (s stopOnShutdown) Start(ctx context.Context) error {
	<-ctx.Done()
	return s.engine.Close()
}

func (stopOnShutdown) NeedLeaderElection() bool { return false }

// addArtifactProxy serves the proxy on every replica (leader or not), when
// a bind address is set. It applies the controller's guards on sources and
// downloads from the artifact hosts only.
func addArtifactProxy(mgr ctrl.Manager, o config.Options) error {
	p := o.ArtifactProxy
	if p.BindAddress == "" && p.Listener == nil {
		return nil
	}
	s := &artifactproxy.Server{
		Client: mgr.GetClient(), Reader: mgr.GetAPIReader(),
		MaxBytes: artifactdigest.MaxArtifactBytes, Guards: o.Guards, Hosts: o.ArtifactHosts,
		Log: ctrl.Log.WithName("artifact-proxy"),
	}
	return mgr.Add(proxyRunnable{s, p})
}

// proxyRunnable runs the proxy on every replica.
type proxyRunnable struct {
	s *artifactproxy.Server
	p config.ArtifactProxy
}

func (r proxyRunnable) Start(ctx context.Context) error {
	ln := r.p.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", r.p.BindAddress); err != nil {
			return fmt.Errorf("artifact proxy: %w", err)
		}
	}
	return r.s.Serve(ctx, ln)
}

func (proxyRunnable) NeedLeaderElection() bool { return false }
