package workspaceset

import (
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/magos-dev/magos/controllers/internal/artifacthost"
	"github.com/magos-dev/magos/controllers/internal/setup"
)

// Controller is the workspaceset-controller with its own flags: the hosts
// its directories generator downloads artifacts from.
type Controller struct {
	// ArtifactHosts bound the artifact downloads (nil: any host).
	ArtifactHosts artifacthost.Hosts
}

// NewController returns the workspaceset-controller; BindFlags sets it.
func NewController() *Controller { return &Controller{} }

// BindFlags registers --artifact-hosts.
func (c *Controller) BindFlags(fs *flag.FlagSet) { c.ArtifactHosts.BindFlag(fs) }

// Register wires the WorkspaceSet reconciler into mgr (Register), its
// directories generator downloading from c's hosts only.
func (c *Controller) Register(mgr ctrl.Manager, opts setup.Options) error {
	if err := c.ArtifactHosts.Validate(); err != nil {
		return err
	}
	return register(mgr, opts, c.ArtifactHosts)
}
