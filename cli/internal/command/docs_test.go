package command

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// The command lists of the README's Status table and of docs/cli.md are
// generated from the command tree: MAGOS_UPDATE_DOCS=1 (make generate)
// writes them; otherwise the tests fail while they differ.

// repoRoot is the repository root, from this package's directory.
var repoRoot = filepath.Join("..", "..", "..")

// leafCommand is a command that runs (not a group of subcommands), as
// users type it: its path below the root and the literal words of its
// usage line (import tofu-controller, suspend workspace|rollout).
type leafCommand struct {
	Name    string
	Aliases []string
	Short   string
	cmd     *cobra.Command
}

// literalWord is a usage word typed as it is (not a placeholder, a flag or
// an optional part).
var literalWord = regexp.MustCompile(`^[a-z][a-z0-9-]*(\|[a-z][a-z0-9-]*)*$`)

// leafCommands are the CLI's commands, in the order of the tree.
func leafCommands() []leafCommand {
	var out []leafCommand
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || !sub.IsAvailableCommand() && !sub.HasSubCommands() {
				continue
			}
			if sub.HasSubCommands() {
				walk(sub)
				continue
			}
			words := strings.Fields(sub.Use)[1:]
			name := strings.TrimPrefix(sub.CommandPath(), sub.Root().CommandPath()+" ")
			for _, w := range words {
				if !literalWord.MatchString(w) {
					break
				}
				name += " " + w
			}
			out = append(out, leafCommand{Name: name, Aliases: sub.Aliases, Short: sub.Short, cmd: sub})
		}
	}
	walk(NewCommand(genericiooptions.IOStreams{}))
	return out
}

// commandsTable is docs/cli.md's list of commands.
func commandsTable() string {
	var b strings.Builder
	b.WriteString("| Command | What it does |\n|---|---|\n")
	for _, c := range leafCommands() {
		names := "`" + c.Name + "`"
		for _, a := range c.Aliases {
			names += " / `" + a + "`"
		}
		short := strings.ToUpper(c.Short[:1]) + c.Short[1:]
		fmt.Fprintf(&b, "| %s | %s |\n", tableCell(names), tableCell(short))
	}
	return b.String()
}

// statusRow is the README Status table's row of the CLI.
func statusRow() string {
	var names []string
	for _, c := range leafCommands() {
		n := "`" + c.Name + "`"
		for _, a := range c.Aliases {
			n += "/`" + a + "`"
		}
		names = append(names, n)
	}
	return fmt.Sprintf("| Magos CLI `kubectl magos`, %d commands: %s ([docs](docs/cli.md)) | done |", len(names), tableCell(strings.Join(names, ", ")))
}

// tableCell escapes the pipes of a Markdown table cell's text (code spans
// included, as GitHub reads tables).
func tableCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

const (
	beginCommands = "<!-- BEGIN commands: generated from the command tree by make generate; do not edit -->\n"
	endCommands   = "<!-- END commands -->\n"
	statusPrefix  = "| Magos CLI `kubectl magos`"
)

// updateDocs says whether to write the generated parts instead of checking
// them.
func updateDocs() bool { return os.Getenv("MAGOS_UPDATE_DOCS") != "" }

// TestCLIDocCommandList: docs/cli.md's list of commands is the command
// tree's.
func TestCLIDocCommandList(t *testing.T) {
	path := filepath.Join(repoRoot, "docs", "cli.md")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	doc := string(data)
	start, end := strings.Index(doc, beginCommands), strings.Index(doc, endCommands)
	require.True(t, start >= 0 && end > start, "docs/cli.md has no generated command list between %q and %q", beginCommands, endCommands)
	want := doc[:start+len(beginCommands)] + commandsTable() + doc[end:]
	if updateDocs() {
		require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
		return
	}
	assert.Equal(t, want, doc, "docs/cli.md's command list is out of date: run make generate")
}

// TestREADMEStatusCLIRow: the README's Status row of the CLI lists the
// command tree's commands.
func TestREADMEStatusCLIRow(t *testing.T) {
	path := filepath.Join(repoRoot, "README.md")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	found := -1
	for i, l := range lines {
		if strings.HasPrefix(l, statusPrefix) {
			require.Equal(t, -1, found, "README.md has two Status rows of the CLI")
			found = i
		}
	}
	require.NotEqual(t, -1, found, "README.md's Status table has no row starting %q", statusPrefix)
	if updateDocs() {
		lines[found] = statusRow()
		require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644))
		return
	}
	assert.Equal(t, statusRow(), lines[found], "README.md's Status row of the CLI is out of date: run make generate")
}

// cliHeading is a heading of docs/cli.md that documents commands.
var cliHeading = regexp.MustCompile("(?m)^### (.*`.*)$")

// TestCLIDocSections: every command has a section of docs/cli.md whose
// heading names it, and every command and flag a heading names exists.
func TestCLIDocSections(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "cli.md"))
	require.NoError(t, err)
	var spans []string
	for _, m := range cliHeading.FindAllStringSubmatch(string(data), -1) {
		parts := strings.Split(m[1], "`")
		for i := 1; i < len(parts); i += 2 {
			spans = append(spans, parts[i])
		}
	}
	require.NotEmpty(t, spans)
	root := NewCommand(genericiooptions.IOStreams{})
	for _, c := range leafCommands() {
		documented := false
		for _, s := range spans {
			if s == c.Name || strings.HasPrefix(s, c.Name+" ") {
				documented = true
			}
		}
		assert.True(t, documented, "docs/cli.md has no section whose heading names `%s`", c.Name)
	}
	flag := regexp.MustCompile(`--([a-z][a-z0-9-]*)`)
	for _, s := range spans {
		found, _, err := root.Find(strings.Fields(s))
		if !assert.NoError(t, err, "docs/cli.md heading `%s`", s) || !assert.NotEqual(t, root, found, "docs/cli.md heading `%s` names no command", s) {
			continue
		}
		for _, m := range flag.FindAllStringSubmatch(s, -1) {
			known := found.Flags().Lookup(m[1]) != nil || found.InheritedFlags().Lookup(m[1]) != nil
			assert.True(t, known, "docs/cli.md heading `%s`: %s has no flag --%s", s, found.CommandPath(), m[1])
		}
	}
}
