package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/magos-dev/magos/controllers/internal/setup"
)

func newVersionCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version of kubectl-magos",
		Long:    `Print the Magos release kubectl-magos was built from ("dev" for a build outside make release).`,
		Example: `  kubectl magos version`,
		Args:    args(0, 0),
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(f.streams.Out, "kubectl-magos %s\n", setup.Version)
			return err
		},
	}
}
