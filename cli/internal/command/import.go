package command

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/failure"
	"github.com/magos-dev/magos/cli/internal/ops"
	"github.com/magos-dev/magos/cli/internal/tfimport"
	"github.com/magos-dev/magos/cli/internal/view"
)

type importOptions struct {
	allNamespaces bool
	dryRun        string
	output        string
	wait          bool
	timeout       time.Duration
	adoptState    string
}

func newImportCommand(f *factory) *cobra.Command {
	o := &importOptions{}
	cmd := &cobra.Command{
		Use:   "import tofu-controller [NAME] [-n NS | -A]",
		Short: "Import tofu-controller's Terraform objects as Workspaces, with a first plan as proof",
		Long: `Import tofu-controller's Terraform objects (infra.contrib.fluxcd.io/v1alpha2)
as Workspaces of the same name and namespace. Every field Magos has a
setting for is mapped; every other field that is set is listed with why.

The state is read in place: tofu-controller keeps it in Secret
tfstate-default-<name> (locked by Lease lock-tfstate-default-<name>), which
is where and how a Workspace of that name keeps it. The import takes both
over for the Workspace (labels and its UID; nothing is copied, nothing is
deleted) while the lock is free, and only then suspends the Terraform
object (spec.suspend: true). Found by name, the state Secret is taken over
only when it is the Terraform object's: written by the kubernetes backend
for that name, no older than the object, claimed by no other Workspace or
owner. Otherwise the object is not imported unless you name the Secret's
UID with --adopt-state (with NAME). A Terraform object whose state is elsewhere
(another engine workspace or secretSuffix, a custom backend, Terraform
Cloud) is not imported.

The Workspace is created with approval: Manual. Its first plan is the
proof: with --wait (the default) the import waits for it and reports, per
Workspace, "no changes" or the changes it would make; switch it to Auto
once the proof holds. A second import of the same object is a no-op; an
import that stopped halfway is finished by running it again.

Exit code 1 when an object was not imported or its first plan has changes.`,
		Example: `  kubectl magos import tofu-controller -n team-a --dry-run=client -o yaml
  kubectl magos import tofu-controller network -n team-a
  kubectl magos import tofu-controller -A --wait=false`,
		Args: args(1, 2),
		RunE: func(cmd *cobra.Command, a []string) error {
			if a[0] != "tofu-controller" {
				return failure.Usage("import knows tofu-controller only, not %q", a[0])
			}
			name := ""
			if len(a) == 2 {
				name = a[1]
			}
			if o.adoptState != "" && (name == "" || o.allNamespaces) {
				return failure.Usage("--adopt-state names the state Secret of one Terraform object: give its NAME (and no -A)")
			}
			return o.run(cmd.Context(), f, name)
		},
	}
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "import the Terraform objects of every namespace")
	cmd.Flags().StringVar(&o.dryRun, "dry-run", "none", "client: print what would be created; server: also have the API server validate each Workspace; both change nothing")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "with --dry-run=client: yaml prints the Workspaces")
	cmd.Flags().BoolVar(&o.wait, "wait", true, "wait for each Workspace's first plan and report it")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 10*time.Minute, "how long --wait waits for each first plan")
	cmd.Flags().StringVar(&o.adoptState, "adopt-state", "", "with NAME: the UID of a state Secret to take over although it is not provably the Terraform object's (the refusal names it)")
	return cmd
}

func (o *importOptions) run(ctx context.Context, f *factory, name string) error {
	if !slices.Contains([]string{"none", "client", "server"}, o.dryRun) {
		return failure.Usage("--dry-run is none, client or server, not %q", o.dryRun)
	}
	if o.output != "" && (o.output != "yaml" || o.dryRun == "none") {
		return failure.Usage("-o yaml goes with --dry-run")
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	ns, err := f.namespace()
	if err != nil {
		return err
	}
	if o.allNamespaces {
		ns = ""
	}
	items, err := ops.TofuObjects(ctx, c, ns, name)
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return failure.NotFound("no Terraform object to import%s", map[bool]string{true: " named " + name, false: ""}[name != ""])
	}
	out := f.streams.Out
	var problems []string
	for i := range items {
		tf := &items[i]
		key := tf.GetNamespace() + "/" + tf.GetName()
		if err := o.importOne(ctx, c, tf, out); err != nil {
			fmt.Fprintf(out, "%s: %v\n", key, err)
			problems = append(problems, key)
		}
	}
	if len(problems) > 0 {
		return failure.Failed("%d of %d not imported, or their first plan has changes: %s", len(problems), len(items), strings.Join(problems, ", "))
	}
	return nil
}

// importOne imports one Terraform object, or finishes an import of it
// that stopped halfway, and says what it did.
func (o *importOptions) importOne(ctx context.Context, c client.WithWatch, tf *unstructured.Unstructured, out io.Writer) error {
	key := tf.GetNamespace() + "/" + tf.GetName()
	imp, err := ops.MapTofuObject(ctx, c, tf)
	if err != nil {
		return err
	}
	if o.dryRun == "server" {
		if err := ops.ValidateTofuImport(ctx, c, imp); err != nil {
			return err
		}
	}
	if o.dryRun != "none" {
		if o.output == "yaml" {
			b, err := yaml.Marshal(imp.Workspace)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "---\n%s", b)
			return nil
		}
		fmt.Fprintf(out, "%s: would be imported as Workspace %s (dry run: %s)\n", key, imp.Workspace.Name, o.dryRun)
		writeSkipped(out, imp.Skipped)
		return nil
	}
	ws, err := ops.ImportTofuObject(ctx, c, tf, imp, o.adoptState)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s: imported as Workspace %s, reading state Secret %s in place; the Terraform object is suspended (destroyResourcesOnDeletion off)\n",
		key, ws.Name, magosv1.StateSecretName(ws.Name))
	writeSkipped(out, imp.Skipped)
	if !o.wait {
		return nil
	}
	return o.reportFirstPlan(ctx, c, ws, imp.AutoApproved, out)
}

// reportFirstPlan waits for the Workspace's first plan and says whether
// it is the proof: no changes.
func (o *importOptions) reportFirstPlan(ctx context.Context, c client.WithWatch, ws *magosv1.Workspace, auto bool, out io.Writer) error {
	got, err := ops.WaitFirstPlan(ctx, c, ws, o.timeout)
	if err != nil {
		return err
	}
	p := got.Status.Plan
	if !p.HasChanges {
		advice := ""
		if auto {
			advice = fmt.Sprintf("; tofu-controller applied every plan: kubectl patch workspace %s -n %s --type merge -p '{\"spec\":{\"approval\":\"Auto\"}}'", ws.Name, ws.Namespace)
		}
		fmt.Fprintf(out, "  first plan %s: no changes: the import holds%s\n", p.ID, advice)
		return nil
	}
	fmt.Fprintf(out, "  first plan %s: %s: the import would change resources; read it (kubectl magos plan show %s -n %s) and do not approve it until it shows no changes\n",
		p.ID, view.PlanCounts(p), ws.Name, ws.Namespace)
	if changes, _, err := ops.LoadChanges(ctx, ops.NewTarget(c, ws.Namespace, ws.Name).PlanGetter(), got, nil); err == nil {
		for _, address := range slices.Sorted(maps.Keys(changes.Resources)) {
			fmt.Fprintf(out, "    %s %s\n", strings.Join(changes.Resources[address].Actions, ", "), address)
		}
	}
	return fmt.Errorf("first plan has changes")
}

// writeSkipped lists the fields that were not mapped.
func writeSkipped(out io.Writer, skipped []tfimport.Skipped) {
	for _, s := range skipped {
		fmt.Fprintf(out, "  not mapped: %s: %s\n", s.Field, s.Why)
	}
}
