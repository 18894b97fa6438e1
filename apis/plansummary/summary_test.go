package plansummary

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testdata/plan.json is `tofu show -json` of a real OpenTofu 1.10.6 plan
// whose summary line was "Plan: 4 to add, 1 to change, 2 to destroy.": three
// creates, an update, a no-op, a delete and a replace.
func TestCountRealPlan(t *testing.T) {
	b, err := os.ReadFile("testdata/plan.json")
	require.NoError(t, err)
	c, err := Count(b)
	require.NoError(t, err)
	assert.Equal(t, Counts{Add: 4, Change: 1, Destroy: 2}, c)
	assert.Equal(t, int32(7), c.Total())
}

func TestCount(t *testing.T) {
	tests := []struct {
		name    string
		plan    string
		want    Counts
		wantErr string
	}{
		{name: "empty plan", plan: `{"format_version":"1.2"}`, want: Counts{}},
		{
			name: "every action",
			plan: `{"format_version":"1.2","resource_changes":[
				{"address":"a","change":{"actions":["create"]}},
				{"address":"b","change":{"actions":["update"]}},
				{"address":"c","change":{"actions":["delete"]}},
				{"address":"d","change":{"actions":["delete","create"]}},
				{"address":"e","change":{"actions":["create","delete"]}},
				{"address":"f","change":{"actions":["no-op"]}},
				{"address":"data.g","change":{"actions":["read"]}},
				{"address":"h","change":{"actions":["forget"]}}]}`,
			want: Counts{Add: 3, Change: 1, Destroy: 3},
		},
		{name: "not JSON", plan: `plan`, wantErr: "reading the plan JSON"},
		{name: "not a plan", plan: `{"values":{}}`, wantErr: "not a plan"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Count([]byte(tt.plan))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
