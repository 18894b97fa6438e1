package clustercheck

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/view"
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

// Options say where Magos and Flux run and whether to check the images
// a run uses.
type Options struct {
	// InstallNamespace is where Magos's controllers run.
	InstallNamespace string
	// FluxNamespace is where Flux's source-controller runs; "" to find it.
	FluxNamespace string
	// Images asks for the image check: a Pod in ImagesNamespace pulls
	// the images a run uses, as a run does, for up to ImagesTimeout.
	Images          bool
	ImagesNamespace string
	ImagesTimeout   time.Duration
}

// Run checks, in order, the Kubernetes version, the kinds served, the
// controllers, the controllers' path to source-controller and, when
// asked, the run images; an error when a check cannot be made at all.
func Run(ctx context.Context, dc discovery.DiscoveryInterface, c client.Client, o Options) ([]view.CheckResult, error) {
	var results []view.CheckResult
	results = append(results, checkKubernetes(dc))
	results = append(results, checkKinds(dc)...)
	controllers, err := checkControllers(ctx, c, o.InstallNamespace, time.Now())
	if err != nil {
		return nil, err
	}
	results = append(results, controllers...)
	access, err := checkFluxSourceAccess(ctx, c, o.InstallNamespace, o.FluxNamespace)
	if err != nil {
		return nil, err
	}
	results = append(results, access...)
	if o.Images {
		images, err := checkImages(ctx, c, o.InstallNamespace, o.ImagesNamespace, o.ImagesTimeout)
		if err != nil {
			return nil, err
		}
		results = append(results, images...)
	}
	return results, nil
}

// checkKubernetes checks the apiserver's version.
func checkKubernetes(dc discovery.ServerVersionInterface) view.CheckResult {
	r := view.CheckResult{Name: "Kubernetes"}
	info, err := dc.ServerVersion()
	if err != nil {
		return view.CheckResult{Name: r.Name, Status: view.CheckFail, Detail: err.Error(), Advice: "check the kubeconfig and that the apiserver is reachable"}
	}
	r.Detail = info.GitVersion
	v, err := version.ParseGeneric(info.GitVersion)
	switch {
	case err != nil:
		r.Status, r.Advice = view.CheckWarn, "the version could not be read; Magos needs 1.32 or later"
	case v.LessThan(minKubernetes):
		r.Status, r.Advice = view.CheckFail, "Magos needs Kubernetes 1.32 or later"
	default:
		r.Status = view.CheckOK
	}
	return r
}

// checkKinds checks which of the kinds Magos reads are served.
func checkKinds(dc discovery.ServerResourcesInterface) []view.CheckResult {
	var out []view.CheckResult
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
			r := view.CheckResult{Name: kind, Status: view.CheckOK, Detail: served[kind]}
			if r.Detail == "" {
				r.Status, r.Detail, r.Advice = view.CheckWarn, "not served ("+strings.Join(want.GroupVersions, " or ")+")", want.Missing
				if want.Required {
					r.Status = view.CheckFail
				}
			}
			if want.Source {
				sources = append(sources, len(out))
				anySource = anySource || r.Status == view.CheckOK
			}
			out = append(out, r)
		}
	}
	if !anySource {
		for _, i := range sources {
			out[i].Status = view.CheckFail
			out[i].Advice = "no Flux source kind is served, so no Workspace can run: " + out[i].Advice
		}
	}
	return out
}

// checkControllers checks each controller's Deployment and leader Lease in
// namespace.
func checkControllers(ctx context.Context, c client.Reader, namespace string, now time.Time) ([]view.CheckResult, error) {
	var out []view.CheckResult
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
func controllerCheck(name, namespace string, deps []appsv1.Deployment, lease *coordinationv1.Lease, now time.Time) view.CheckResult {
	r := view.CheckResult{Name: name, Status: view.CheckFail}
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
		r.Status, r.Advice = view.CheckWarn, "scaled to 0: nothing reconciles its objects"
		return r
	}
	holder, renewed := leaseHolder(lease)
	if holder == "" || renewed.IsZero() || now.Sub(renewed) > leaseStale(lease) {
		r.Detail += "; no leader"
		r.Advice = fmt.Sprintf("no replica holds the leader Lease magos-%s: kubectl -n %s logs deployment/%s", name, namespace, d.Name)
		return r
	}
	r.Status = view.CheckOK
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
