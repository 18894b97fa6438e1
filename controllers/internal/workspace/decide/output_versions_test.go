package decide

import (
	"testing"

	"github.com/stretchr/testify/assert"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

func TestNextOutputVersions(t *testing.T) {
	prev := []magosv1.OutputVersion{{Name: "subnets", PlanID: "p1"}, {Name: "label", PlanID: "p1"}, {Name: "gone", PlanID: "p1"}}
	got := nextOutputVersions(prev, []string{"label", "new", "subnets"}, []string{"label", "new"}, "p2")
	assert.Equal(t, []magosv1.OutputVersion{{Name: "label", PlanID: "p2"}, {Name: "new", PlanID: "p2"}, {Name: "subnets", PlanID: "p1"}}, got,
		"changed and new outputs take the apply's plan, unchanged ones keep theirs, unwritten ones go")
	assert.Equal(t, []magosv1.OutputVersion{{Name: "a", PlanID: "p1"}}, nextOutputVersions(nil, []string{"a"}, nil, "p1"),
		"an output without a version gets the apply's plan even when not reported changed")
}
