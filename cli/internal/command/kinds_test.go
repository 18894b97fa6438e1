package command

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/magos-dev/magos/cli/internal/failure"
)

func TestKindAndName(t *testing.T) {
	tests := []struct {
		args       []string
		kind, name string
	}{
		{nil, "workspaces", ""},
		{[]string{"rollouts"}, "rollouts", ""},
		{[]string{"proj"}, "projects", ""},
		{[]string{"hello"}, "workspaces", "hello"},
		{[]string{"ro", "release"}, "rollouts", "release"},
	}
	for _, tt := range tests {
		k, name, err := kindAndName(tt.args)
		assert.NoError(t, err, tt.args)
		assert.Equal(t, tt.kind, k.name, tt.args)
		assert.Equal(t, tt.name, name, tt.args)
	}
	_, _, err := kindAndName([]string{"pods", "x"})
	assert.Equal(t, failure.ExitUsage, failure.ExitCode(err))
}
