package command

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magos-dev/magos/cli/internal/failure"
)

type getOptions struct {
	allNamespaces bool
	selector      string
	output        string
	watch         bool
}

func newGetCommand(f *factory) *cobra.Command {
	o := &getOptions{}
	cmd := &cobra.Command{
		Use:     "get [KIND] [NAME]",
		Aliases: []string{"status"},
		Short:   "List Workspaces, Projects, Rollouts or WorkspaceSets with their status",
		Long: `List Workspaces (the default), Projects or Rollouts with what they are doing:
a Workspace's phase, source revision, plan (+add ~change -destroy), policy
verdict, stuck lock holder, last run and Ready message.`,
		Example: `  kubectl magos get                       # Workspaces of the current namespace
  kubectl magos status hello -n infra      # one Workspace
  kubectl magos get rollouts -A            # Rollouts of every namespace
  kubectl magos get -l env=prod -o yaml    # Workspaces labelled env=prod, as YAML
  kubectl magos get hello --watch          # print hello again whenever it changes`,
		Args: args(0, 2),
		RunE: func(cmd *cobra.Command, a []string) error {
			k, name, err := kindAndName(a)
			if err != nil {
				return err
			}
			if err := checkOutput(o.output); err != nil {
				return err
			}
			return o.run(cmd.Context(), f, k, name)
		},
	}
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "list objects of every namespace")
	cmd.Flags().StringVarP(&o.selector, "selector", "l", "", "label selector, e.g. env=prod")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "output format: wide (a table with more columns), json or yaml (default: a table)")
	cmd.Flags().BoolVarP(&o.watch, "watch", "w", false, "after listing, print objects again as they change")
	return cmd
}

func (o *getOptions) run(ctx context.Context, f *factory, k *kind, name string) error {
	c, err := f.client()
	if err != nil {
		return err
	}
	opts, ns, err := o.listOptions(f, name)
	if err != nil {
		return err
	}
	list := k.newList()
	if err := c.List(ctx, list, opts...); err != nil {
		return err
	}
	objs, err := items(list)
	if err != nil {
		return err
	}
	if name != "" && len(objs) == 0 {
		return failure.NotFound("%s %q not found in namespace %q", k.aliases[0], name, ns)
	}
	if err := o.print(f, k, list, objs, name != "", true); err != nil {
		return err
	}
	if len(objs) == 0 && o.tabular() {
		fmt.Fprintf(f.streams.ErrOut, "No %s found%s.\n", k.name, o.where(ns))
	}
	if !o.watch {
		return nil
	}
	rv, err := meta.ListAccessor(list)
	if err != nil {
		return err
	}
	return o.follow(ctx, c, f, k, append(opts, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv.GetResourceVersion()}}))
}

// listOptions are the namespace, label and name selection of the flags and
// the namespace they name.
func (o *getOptions) listOptions(f *factory, name string) ([]client.ListOption, string, error) {
	var opts []client.ListOption
	ns := ""
	if !o.allNamespaces {
		var err error
		if ns, err = f.namespace(); err != nil {
			return nil, "", err
		}
		opts = append(opts, client.InNamespace(ns))
	}
	if o.selector != "" {
		sel, err := labels.Parse(o.selector)
		if err != nil {
			return nil, "", failure.Usage("invalid label selector %q: %v", o.selector, err)
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
	}
	if name != "" {
		opts = append(opts, client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", name)})
	}
	return opts, ns, nil
}

func (o *getOptions) where(ns string) string {
	if o.allNamespaces {
		return ""
	}
	return fmt.Sprintf(" in namespace %q", ns)
}

// print writes objs as a table (with headers when asked) or list as JSON
// or YAML; one named object is printed as itself, not as a list.
func (o *getOptions) print(f *factory, k *kind, list client.ObjectList, objs []runtime.Object, single, headers bool) error {
	out := f.streams.Out
	if !o.tabular() {
		if single && len(objs) == 1 {
			return printObject(out, o.output, objs[0])
		}
		return printObject(out, o.output, list)
	}
	t := newTable(out)
	wide := o.output == outputWide && k.wide != nil
	if headers {
		h := k.headers
		if wide {
			h = slices.Concat(h, k.wideHeaders)
		}
		t.row(o.withNamespace("NAMESPACE", h)...)
	}
	now := time.Now()
	for _, obj := range objs {
		ns := obj.(client.Object).GetNamespace()
		row := k.row(obj, now)
		if wide {
			row = slices.Concat(row, k.wide(obj))
		}
		t.row(o.withNamespace(ns, row)...)
	}
	return t.flush()
}

// tabular says whether -o asks for a table.
func (o *getOptions) tabular() bool { return o.output == outputTable || o.output == outputWide }

// withNamespace prefixes a row with its namespace under -A.
func (o *getOptions) withNamespace(ns string, row []string) []string {
	if !o.allNamespaces {
		return row
	}
	return append([]string{ns}, row...)
}

// follow prints each object again as it changes, until ctx ends.
func (o *getOptions) follow(ctx context.Context, c client.WithWatch, f *factory, k *kind, opts []client.ListOption) error {
	w, err := c.Watch(ctx, k.newList(), opts...)
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
			case watch.Error:
				return apierrors.FromObject(ev.Object)
			default:
				continue
			}
			if err := o.print(f, k, nil, []runtime.Object{ev.Object}, true, false); err != nil {
				return err
			}
		}
	}
}
