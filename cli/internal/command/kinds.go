package command

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/failure"
	"github.com/magos-dev/magos/cli/internal/view"
)

// kind is a Magos kind `get` lists.
type kind struct {
	name    string   // plural, as typed: workspaces
	aliases []string // singular and short names
	headers []string
	newList func() client.ObjectList
	row     func(obj runtime.Object, now time.Time) []string
	// wideHeaders and wide are the columns -o wide adds, if any.
	wideHeaders []string
	wide        func(obj runtime.Object) []string
}

var (
	workspaces = &kind{
		name: "workspaces", aliases: []string{"workspace", "ws", "tfws"}, headers: view.WorkspaceHeaders,
		newList:     func() client.ObjectList { return &magosv1.WorkspaceList{} },
		row:         func(o runtime.Object, now time.Time) []string { return view.WorkspaceRow(o.(*magosv1.Workspace), now) },
		wideHeaders: view.WorkspaceWideHeaders,
		wide:        func(o runtime.Object) []string { return view.WorkspaceWide(o.(*magosv1.Workspace)) },
	}
	projects = &kind{
		name: "projects", aliases: []string{"project", "proj"}, headers: view.ProjectHeaders,
		newList: func() client.ObjectList { return &magosv1.ProjectList{} },
		row:     func(o runtime.Object, _ time.Time) []string { return view.ProjectRow(o.(*magosv1.Project)) },
	}
	rollouts = &kind{
		name: "rollouts", aliases: []string{"rollout", "ro", "tfro"}, headers: view.RolloutHeaders,
		newList: func() client.ObjectList { return &magosv1.RolloutList{} },
		row:     func(o runtime.Object, _ time.Time) []string { return view.RolloutRow(o.(*magosv1.Rollout)) },
	}
	workspaceSets = &kind{
		name: "workspacesets", aliases: []string{"workspaceset", "wss"}, headers: view.WorkspaceSetHeaders,
		newList: func() client.ObjectList { return &magosv1.WorkspaceSetList{} },
		row:     func(o runtime.Object, _ time.Time) []string { return view.WorkspaceSetRow(o.(*magosv1.WorkspaceSet)) },
	}
	kinds = []*kind{workspaces, projects, rollouts, workspaceSets}
)

// lookupKind finds the kind a user typed (plural, singular or short name).
func lookupKind(s string) *kind {
	for _, k := range kinds {
		if s == k.name || slices.Contains(k.aliases, s) {
			return k
		}
	}
	return nil
}

// kindAndName reads `get [KIND] [NAME]`: a single argument is a kind if it
// names one, else the name of a Workspace.
func kindAndName(a []string) (*kind, string, error) {
	switch len(a) {
	case 0:
		return workspaces, "", nil
	case 1:
		if k := lookupKind(a[0]); k != nil {
			return k, "", nil
		}
		return workspaces, a[0], nil
	default:
		k := lookupKind(a[0])
		if k == nil {
			return nil, "", failure.Usage("unknown kind %q: use workspaces, projects, rollouts or workspacesets", a[0])
		}
		return k, a[1], nil
	}
}

// items are the objects of a list.
func items(list client.ObjectList) ([]runtime.Object, error) { return meta.ExtractList(list) }
