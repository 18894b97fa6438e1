package command

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// Version is the release kubectl-magos was built from: set by make release,
// else the module version `go install …@<tag>` records, else "dev".
var Version = ""

// buildVersion is Version, or the module's version in the build info.
func buildVersion() string {
	if Version != "" {
		return Version
	}
	if info, ok := debug.ReadBuildInfo(); ok && strings.HasPrefix(info.Main.Version, "v") {
		return strings.TrimPrefix(info.Main.Version, "v")
	}
	return "dev"
}

func newVersionCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version of kubectl-magos",
		Long:    `Print the Magos release kubectl-magos was built from (the tag go install fetched; "dev" for a build from a checkout).`,
		Example: `  kubectl magos version`,
		Args:    args(0, 0),
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(f.streams.Out, "kubectl-magos %s\n", buildVersion())
			return err
		},
	}
}
