package command

import (
	"bytes"
	"context"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// run runs the CLI without an apiserver: usage errors never reach one.
func run(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := Run(context.Background(), args, genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"approve"},
		{"approve", "a", "b"},
		{"wait", "hello"},
		{"get", "--no-such-flag"},
		{"get", "-o", "name"},
		{"frobnicate"},
		{"plan"},
		{"policy", "test", "plan.json"},
		{"suspend", "project", "x"},
	} {
		code, _, stderr := run(args...)
		assert.Equal(t, ExitUsage, code, "%v: %s", args, stderr)
		assert.Contains(t, stderr, "kubectl magos", "%v: the error points at --help", args)
	}
}

func TestHelpHasExamplesForEveryCommand(t *testing.T) {
	var check func(c *cobra.Command)
	check = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			assert.NotEmpty(t, sub.Example, "%s has no example", sub.CommandPath())
			check(sub)
		}
	}
	check(NewCommand(genericiooptions.NewTestIOStreamsDiscard()))
	code, out, _ := run("approve", "--help")
	assert.Equal(t, ExitOK, code)
	assert.Contains(t, out, "kubectl magos approve hello --plan")
}

func TestCompletion(t *testing.T) {
	code, out, _ := run("completion", "bash")
	assert.Equal(t, ExitOK, code)
	assert.Contains(t, out, "bash completion")
}
