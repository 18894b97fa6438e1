package command

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// minKubernetes is the oldest Kubernetes the charts install on (their
// kubeVersion).
var minKubernetes = version.MustParseGeneric("1.32.0")

// controllerNames are the chart's five controllers, by their Deployments'
// app.kubernetes.io/name label and their leader Leases
// (magos-<name>, as the controllers name them).
var controllerNames = []string{"workspace-controller", "project-controller", "rollout-controller", "variableset-controller", "workspaceset-controller"}

// servedKinds are the kinds Magos reads, by group-version: its own (needed),
// Flux's sources and Kyverno's policies (optional: the controllers start
// without them and watch them once installed). Source kinds are optional
// one by one, but with none served no Workspace can run: then they fail.
var servedKinds = []struct {
	GroupVersions []string // any one of them serving the kinds will do
	Kinds         []string
	Required      bool
	Source        bool
	Missing       string // what to do
}{
	{[]string{magosv1.GroupVersion.String()}, []string{"Workspace", "Project", "Rollout", "VariableSet", "WorkspaceSet"}, true, false,
		"install the CRDs: helm install magos-crds charts/magos-crds (or the magos chart with crds.enabled=true)"},
	{[]string{"source.toolkit.fluxcd.io/v1"}, []string{"GitRepository", "OCIRepository", "Bucket"}, false, true,
		"install Flux 2.6 or later (flux install --components=source-controller); until then Workspaces wait with SourceNotReady"},
	{[]string{"source.toolkit.fluxcd.io/v1"}, []string{"ExternalArtifact"}, false, true,
		"install Flux 2.7 or later, needed only by Workspaces whose source is an ExternalArtifact; until then they wait with SourceNotReady"},
	{[]string{"policies.kyverno.io/v1", "policies.kyverno.io/v1beta1"}, []string{"ValidatingPolicy", "NamespacedValidatingPolicy"}, false, false,
		"install Kyverno's CRDs (a release serving policies.kyverno.io/v1 or v1beta1; tested with 1.19); until then a Workspace that selects policies is blocked by the gate"},
}

// checkStatus is the outcome of one check.
type checkStatus string

const (
	checkOK   checkStatus = "ok"
	checkWarn checkStatus = "warn"
	checkFail checkStatus = "fail"
)

// checkResult is one line of `kubectl magos check`.
type checkResult struct {
	Name   string
	Status checkStatus
	// Detail says what was found; Advice what to do when not ok.
	Detail, Advice string
}

// checkOptions are check's flags.
type checkOptions struct {
	installNamespace string
	fluxNamespace    string
	images           bool
	timeout          time.Duration
}

func newCheckCommand(f *factory) *cobra.Command {
	o := checkOptions{}
	cmd := &cobra.Command{
		Use:   "check [--install-namespace NS] [--flux-namespace NS] [--images [-n NS]]",
		Short: "Check that the cluster can run Magos and that Magos runs",
		Long: `Check, before and after installing, what Magos needs: the Kubernetes
version, the Magos CRDs, Flux's source CRDs and Kyverno's policy CRDs (both
optional: the controllers start without them and pick them up once
installed), the five controllers' Deployments and their leader Leases,
and whether the NetworkPolicies of Flux's namespace and of Magos's let the
controllers that download Flux artifacts (workspace-controller,
workspaceset-controller) reach source-controller: read from the policies,
without sending any traffic. With --images, it also pulls the images a run uses (the runner image and the
default engine's image, as the workspace-controller runs them) in a Pod in
namespace -n, with the runner pull Secrets, as a run Pod does: a tenant
namespace whose runs cannot pull them fails here first. Every check that is
not ok says what to do.

Exit code 1 when a check fails; warnings (a missing optional CRD) leave it 0.`,
		Example: `  kubectl magos check
  kubectl magos check --install-namespace platform-system
  kubectl magos check --flux-namespace flux  # Flux's source-controller runs in namespace flux
  kubectl magos check --images -n team-a     # can team-a's runs pull their images?`,
		Args: args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error { return check(cmd.Context(), f, o) },
	}
	cmd.Flags().StringVar(&o.installNamespace, "install-namespace", "magos-system", "the namespace Magos's controllers run in")
	cmd.Flags().StringVar(&o.fluxNamespace, "flux-namespace", "", "the namespace of Flux's source-controller (default: where a Flux source's artifact URL points, else flux-system)")
	cmd.Flags().BoolVar(&o.images, "images", false, "pull the runner and engine images in a Pod in namespace -n, as a run does")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 3*time.Minute, "how long --images waits for the node to pull the images")
	return cmd
}

func check(ctx context.Context, f *factory, o checkOptions) error {
	cfg, err := f.flags.ToRESTConfig()
	if err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	var results []checkResult
	results = append(results, checkKubernetes(dc))
	results = append(results, checkKinds(dc)...)
	controllers, err := checkControllers(ctx, c, o.installNamespace, time.Now())
	if err != nil {
		return err
	}
	results = append(results, controllers...)
	access, err := checkFluxSourceAccess(ctx, c, o.installNamespace, o.fluxNamespace)
	if err != nil {
		return err
	}
	results = append(results, access...)
	if o.images {
		ns, err := f.namespace()
		if err != nil {
			return err
		}
		images, err := checkImages(ctx, c, o.installNamespace, ns, o.timeout)
		if err != nil {
			return err
		}
		results = append(results, images...)
	}
	printChecks(f.streams.Out, results)
	var failedChecks []string
	for _, r := range results {
		if r.Status == checkFail {
			failedChecks = append(failedChecks, r.Name)
		}
	}
	if len(failedChecks) > 0 {
		return failed("%d check(s) failed: %s", len(failedChecks), strings.Join(failedChecks, ", "))
	}
	return nil
}

// checkKubernetes checks the apiserver's version.
func checkKubernetes(dc discovery.ServerVersionInterface) checkResult {
	r := checkResult{Name: "Kubernetes"}
	info, err := dc.ServerVersion()
	if err != nil {
		return checkResult{Name: r.Name, Status: checkFail, Detail: err.Error(), Advice: "check the kubeconfig and that the apiserver is reachable"}
	}
	r.Detail = info.GitVersion
	v, err := version.ParseGeneric(info.GitVersion)
	switch {
	case err != nil:
		r.Status, r.Advice = checkWarn, "the version could not be read; Magos needs 1.32 or later"
	case v.LessThan(minKubernetes):
		r.Status, r.Advice = checkFail, "Magos needs Kubernetes 1.32 or later"
	default:
		r.Status = checkOK
	}
	return r
}

// checkKinds checks which of the kinds Magos reads are served.
func checkKinds(dc discovery.ServerResourcesInterface) []checkResult {
	var out []checkResult
	var sources []int // indexes in out of the source kinds
	anySource := false
	for _, want := range servedKinds {
		served := map[string]string{}
		for _, gv := range want.GroupVersions {
			list, err := dc.ServerResourcesForGroupVersion(gv)
			if err != nil {
				continue // not served (or unreachable: the Kubernetes check says so)
			}
			for _, res := range list.APIResources {
				if _, seen := served[res.Kind]; !seen && !strings.Contains(res.Name, "/") {
					served[res.Kind] = gv
				}
			}
		}
		for _, kind := range want.Kinds {
			r := checkResult{Name: kind, Status: checkOK, Detail: served[kind]}
			if r.Detail == "" {
				r.Status, r.Detail, r.Advice = checkWarn, "not served ("+strings.Join(want.GroupVersions, " or ")+")", want.Missing
				if want.Required {
					r.Status = checkFail
				}
			}
			if want.Source {
				sources = append(sources, len(out))
				anySource = anySource || r.Status == checkOK
			}
			out = append(out, r)
		}
	}
	if !anySource {
		for _, i := range sources {
			out[i].Status = checkFail
			out[i].Advice = "no Flux source kind is served, so no Workspace can run: " + out[i].Advice
		}
	}
	return out
}

// checkControllers checks each controller's Deployment and leader Lease in
// namespace.
func checkControllers(ctx context.Context, c client.Reader, namespace string, now time.Time) ([]checkResult, error) {
	var out []checkResult
	for _, name := range controllerNames {
		var deps appsv1.DeploymentList
		if err := c.List(ctx, &deps, client.InNamespace(namespace), client.MatchingLabels{"app.kubernetes.io/name": name}); err != nil {
			return nil, fmt.Errorf("listing the Deployments of %s: %w", name, err)
		}
		var lease *coordinationv1.Lease
		l := &coordinationv1.Lease{}
		err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "magos-" + name}, l)
		switch {
		case err == nil:
			lease = l
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("reading the leader Lease of %s: %w", name, err)
		}
		out = append(out, controllerCheck(name, namespace, deps.Items, lease, now))
	}
	return out, nil
}

// controllerCheck judges one controller by its Deployment (none, or the
// first of deps) and its leader Lease.
func controllerCheck(name, namespace string, deps []appsv1.Deployment, lease *coordinationv1.Lease, now time.Time) checkResult {
	r := checkResult{Name: name, Status: checkFail}
	if len(deps) == 0 {
		r.Detail = "no Deployment in " + namespace
		r.Advice = "install Magos: helm install magos charts/magos -n " + namespace + " --create-namespace (docs/installation.md); or pass --install-namespace"
		return r
	}
	d := deps[0]
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	r.Detail = fmt.Sprintf("Deployment %s: %d/%d available", d.Name, d.Status.AvailableReplicas, want)
	if want > 0 && d.Status.AvailableReplicas == 0 {
		r.Advice = fmt.Sprintf("no replica is available: kubectl -n %s describe deployment %s; kubectl -n %s logs deployment/%s", namespace, d.Name, namespace, d.Name)
		return r
	}
	if want == 0 {
		r.Status, r.Advice = checkWarn, "scaled to 0: nothing reconciles its objects"
		return r
	}
	holder, renewed := leaseHolder(lease)
	if holder == "" || renewed.IsZero() || now.Sub(renewed) > leaseStale(lease) {
		r.Detail += "; no leader"
		r.Advice = fmt.Sprintf("no replica holds the leader Lease magos-%s: kubectl -n %s logs deployment/%s", name, namespace, d.Name)
		return r
	}
	r.Status = checkOK
	r.Detail += "; leader " + holder
	return r
}

// leaseHolder is the Lease's holder and when it last renewed it.
func leaseHolder(l *coordinationv1.Lease) (string, time.Time) {
	if l == nil || l.Spec.HolderIdentity == nil {
		return "", time.Time{}
	}
	var renewed time.Time
	if l.Spec.RenewTime != nil {
		renewed = l.Spec.RenewTime.Time
	}
	return *l.Spec.HolderIdentity, renewed
}

// leaseStale is how old a renewal may be before the leader is taken for
// gone: twice the Lease's duration.
func leaseStale(l *coordinationv1.Lease) time.Duration {
	d := 15 * time.Second
	if l.Spec.LeaseDurationSeconds != nil {
		d = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	return 2 * d
}

// printChecks writes the results as a table, advice under each check that
// is not ok.
func printChecks(out io.Writer, results []checkResult) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, r := range results {
		fmt.Fprintf(w, "%s\t%s\t%s\n", r.Status, r.Name, r.Detail)
		if r.Advice != "" {
			fmt.Fprintf(w, "\t\t→ %s\n", r.Advice)
		}
	}
	_ = w.Flush()
}
