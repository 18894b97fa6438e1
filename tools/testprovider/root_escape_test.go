package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPathEscapingRootFails checks that a path outside the provider root is
// refused at plan time with a clear error, and that nothing is written.
func TestPathEscapingRootFails(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "escaped.txt")
	for name, p := range map[string]string{
		"dot-dot":  "../escaped.txt",
		"absolute": outside,
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorkdir(t, mainTF(
				fmt.Sprintf("provider \"magostest\" {\n  root = %q\n}", root),
				fmt.Sprintf("resource \"magostest_file\" \"escape\" {\n  path    = %q\n  content = \"x\"\n}", p)))
			w.must(0, "init")
			// OpenTofu wraps long diagnostics: compare with spaces collapsed.
			out := strings.Join(strings.Fields(w.must(1, "plan")), " ")
			for _, want := range []string{"Invalid magostest_file path", "escapes root", "paths must stay inside the provider root"} {
				if !strings.Contains(out, want) {
					t.Errorf("plan output lacks %q:\n%s", want, out)
				}
			}
			w.must(1, "apply", "-auto-approve")
			if _, err := os.Stat(outside); err == nil {
				t.Fatalf("%s was written outside the root", outside)
			}
		})
	}
}
