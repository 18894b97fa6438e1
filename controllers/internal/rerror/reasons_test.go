package rerror_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestErrorsKeepTheirReasonsClass: the controllers stall only with reasons
// the API's reason table says stall, and retry or wait only with reasons it
// says do not: what kstatus reads matches what docs/reasons.md promises.
func TestErrorsKeepTheirReasonsClass(t *testing.T) {
	fset := token.NewFileSet()
	calls := 0
	err := filepath.WalkDir(filepath.Join("..", ".."), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			fn, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || fmtIdent(fn.X) != "rerror" {
				return true
			}
			verb := fn.Sel.Name
			if verb != "Stall" && verb != "Retry" && verb != "Wait" {
				return true
			}
			arg, ok := call.Args[0].(*ast.SelectorExpr)
			if !ok || fmtIdent(arg.X) != "magosv1" {
				return true // a reason passed through (a variable): checked where it is chosen
			}
			calls++
			// The API names a reason constant Reason<value> (the shared ones
			// <value>Reason).
			reason := strings.TrimSuffix(strings.TrimPrefix(arg.Sel.Name, "Reason"), "Reason")
			where := fset.Position(call.Pos()).String()
			info, ok := magosv1.LookupReason(reason)
			if !assert.True(t, ok, "%s: reason %s is not in the reason table", where, reason) {
				return true
			}
			if verb == "Stall" {
				assert.Equal(t, magosv1.ReasonStalls, info.Class, "%s: rerror.Stall with reason %s, whose class is %s", where, reason, info.Class)
			} else {
				assert.NotEqual(t, magosv1.ReasonStalls, info.Class, "%s: rerror.%s with reason %s, which stalls", where, verb, reason)
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, calls, 20, "the controllers' reasoned errors were found")
}

func fmtIdent(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
