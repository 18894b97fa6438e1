package plansummary

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadRealPlan(t *testing.T) {
	b, err := os.ReadFile("testdata/plan.json")
	require.NoError(t, err)
	s, err := Read(bytes.NewReader(b))
	require.NoError(t, err)
	assert.Equal(t, Summary{Counts: Counts{Add: 4, Change: 1, Destroy: 2}, HasChanges: true}, s)
}

func TestRead(t *testing.T) {
	for _, tc := range []struct {
		name    string
		plan    string
		want    Summary
		wantErr string
	}{
		{name: "no changes", plan: `{"format_version":"1.2","planned_values":{"root_module":{}},"resource_changes":[{"address":"a","change":{"actions":["no-op"]}}]}`},
		{name: "resources", plan: `{"resource_changes":[{"address":"a","change":{"actions":["create"]}},{"address":"b","change":{"actions":["delete","create"]}}],"format_version":"1.2"}`,
			want: Summary{Counts: Counts{Add: 2, Destroy: 1}, HasChanges: true}},
		{name: "an output only", plan: `{"format_version":"1.2","output_changes":{"x":{"actions":["update"]},"y":{"actions":["no-op"]}}}`,
			want: Summary{HasChanges: true}},
		{name: "unchanged outputs", plan: `{"format_version":"1.2","output_changes":{"y":{"actions":["no-op"]}},"resource_changes":null}`},
		{name: "not a plan", plan: `{"resource_changes":[]}`, wantErr: "no format_version"},
		{name: "not JSON", plan: `[`, wantErr: "reading the plan JSON"},
		{name: "truncated", plan: `{"format_version":"1.2","resource_changes":[{"address":"a"`, wantErr: "reading the plan JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Read(strings.NewReader(tc.plan))
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
