package realnode

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocListsEveryTestOfTheTier: docs/real-node.md's list of the tier's
// tests holds every test and benchmark of controllers/e2e/realnode, and
// nothing else.
func TestDocListsEveryTestOfTheTier(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	files, err := filepath.Glob(filepath.Join(root, "controllers", "e2e", "realnode", "*_test.go"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	tests := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Name.Name == "TestMain" {
				continue
			}
			if name := fn.Name.Name; strings.HasPrefix(name, "Test") || strings.HasPrefix(name, "Benchmark") {
				tests[name] = true
			}
		}
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "real-node.md"))
	require.NoError(t, err)
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `((?:Test|Benchmark)[A-Za-z0-9_]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		assert.False(t, listed[m[1]], "docs/real-node.md lists %s twice", m[1])
		listed[m[1]] = true
	}
	for name := range tests {
		assert.True(t, listed[name], "docs/real-node.md's list of the tier's tests lacks %s (controllers/e2e/realnode)", name)
	}
	for name := range listed {
		assert.True(t, tests[name], "docs/real-node.md lists %s, which controllers/e2e/realnode does not have", name)
	}
}
