package decide

import (
	"slices"
	"sort"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// nextOutputVersions is status.outputVersions after apply planID wrote
// outputs written, of which changed differ from before: a changed or new
// output gets planID, the others keep theirs, outputs no longer written go.
func nextOutputVersions(prev []magosv1.OutputVersion, written, changed []string, planID string) []magosv1.OutputVersion {
	var next []magosv1.OutputVersion
	for _, name := range written {
		id := OutputVersion(prev, name)
		if id == "" || slices.Contains(changed, name) {
			id = planID
		}
		next = append(next, magosv1.OutputVersion{Name: name, PlanID: id})
	}
	sort.Slice(next, func(i, j int) bool { return next[i].Name < next[j].Name })
	return next
}

// OutputVersion is the plan that last changed output name, or "".
func OutputVersion(versions []magosv1.OutputVersion, name string) string {
	for _, v := range versions {
		if v.Name == name {
			return v.PlanID
		}
	}
	return ""
}
