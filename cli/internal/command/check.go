package command

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/discovery"

	"github.com/magos-dev/magos/cli/internal/clustercheck"
	"github.com/magos-dev/magos/cli/internal/failure"
	"github.com/magos-dev/magos/cli/internal/view"
)

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
	opts := clustercheck.Options{InstallNamespace: o.installNamespace, FluxNamespace: o.fluxNamespace, Images: o.images, ImagesTimeout: o.timeout}
	if o.images {
		if opts.ImagesNamespace, err = f.namespace(); err != nil {
			return err
		}
	}
	results, err := clustercheck.Run(ctx, dc, c, opts)
	if err != nil {
		return err
	}
	view.WriteChecks(f.streams.Out, results)
	var failedChecks []string
	for _, r := range results {
		if r.Status == view.CheckFail {
			failedChecks = append(failedChecks, r.Name)
		}
	}
	if len(failedChecks) > 0 {
		return failure.Failed("%d check(s) failed: %s", len(failedChecks), strings.Join(failedChecks, ", "))
	}
	return nil
}
