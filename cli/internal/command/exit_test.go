package command

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/magos-dev/magos/cli/internal/failure"
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
		assert.Equal(t, failure.ExitUsage, code, "%v: %s", args, stderr)
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
	assert.Equal(t, failure.ExitOK, code)
	assert.Contains(t, out, "kubectl magos approve hello --plan")
}

func TestCompletion(t *testing.T) {
	code, out, _ := run("completion", "bash")
	assert.Equal(t, failure.ExitOK, code)
	assert.Contains(t, out, "bash completion")
}

// What a user passes back to the CLI, an object's name in an error
// message, is printed without the sequences a terminal would act on.
func TestRunPrintsNoEscapeSequences(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Run(context.Background(), []string{"get", "--\x1b]0;pwned\x07\x1b[2J"}, genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	assert.Equal(t, failure.ExitUsage, code)
	assert.Contains(t, errOut.String(), "unknown flag")
	assert.NotContains(t, errOut.String(), "\x1b")
	assert.NotContains(t, errOut.String(), "\x07")
}
