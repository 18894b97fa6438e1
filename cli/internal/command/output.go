package command

import (
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/magos-dev/magos/cli/internal/failure"
	"github.com/magos-dev/magos/cli/internal/ops"
)

// Output formats of -o.
const (
	outputTable = ""
	outputWide  = "wide"
	outputJSON  = "json"
	outputYAML  = "yaml"
)

// checkOutput refuses an -o value other than json or yaml.
func checkOutput(o string) error {
	switch o {
	case outputTable, outputWide, outputJSON, outputYAML:
		return nil
	}
	return failure.Usage("unknown output format %q: use -o wide, -o json or -o yaml", o)
}

// printObject writes obj as JSON or YAML with its apiVersion and kind.
func printObject(w io.Writer, format string, obj runtime.Object) error {
	if err := setKind(obj); err != nil {
		return err
	}
	if meta.IsListType(obj) {
		objs, err := meta.ExtractList(obj)
		if err != nil {
			return err
		}
		for _, o := range objs {
			if err := setKind(o); err != nil {
				return err
			}
		}
	}
	var p printers.ResourcePrinter = &printers.JSONPrinter{}
	if format == outputYAML {
		p = &printers.YAMLPrinter{}
	}
	return p.PrintObj(obj, w)
}

// setKind fills in obj's apiVersion and kind, which typed reads leave out.
func setKind(obj runtime.Object) error {
	gvk, err := apiutil.GVKForObject(obj, ops.Scheme)
	if err != nil {
		return err
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return nil
}

// table writes rows under headers, aligned like kubectl's tables.
type table struct {
	w interface {
		io.Writer
		Flush() error
	}
}

func newTable(w io.Writer) *table { return &table{w: printers.GetNewTabWriter(w)} }

func (t *table) row(cells ...string) { fmt.Fprintln(t.w, strings.Join(cells, "\t")) }

func (t *table) flush() error { return t.w.Flush() }
