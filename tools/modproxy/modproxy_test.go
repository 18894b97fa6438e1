package main

import (
	"archive/zip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"
)

// repo writes a git repository with a LICENSE at its root, the modules
// example.com/r/a (with an ignored file and a nested module) and
// example.com/r/b, and an untracked file of a that git would track.
func repo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range map[string]string{
		"LICENSE":            "the licence\n",
		".gitignore":         "*.log\n",
		"a/go.mod":           "module example.com/r/a\n\ngo 1.26\n",
		"a/a.go":             "package a\n",
		"a/debug.log":        "ignored\n",
		"a/nested/go.mod":    "module example.com/r/a/nested\n\ngo 1.26\n",
		"a/nested/nested.go": "package nested\n",
		"b/go.mod":           "module example.com/r/b\n\ngo 1.26\n",
		"b/b.go":             "package b\n",
	} {
		writeFile(t, filepath.Join(root, name), content)
	}
	git(t, root, "init", "-q")
	git(t, root, "add", ".")
	git(t, root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "init")
	writeFile(t, filepath.Join(root, "a/new.go"), "package a\n")
	return root
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func served(t *testing.T, out, module string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, module, "@v", "list"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(data))
}

// TestOnlySubdirectoryTagsVersionSubdirectoryModules: as on a real proxy,
// a tag vX.Y.Z versions no module in a subdirectory; <dir>/vX.Y.Z
// versions the module in <dir> and no other.
func TestOnlySubdirectoryTagsVersionSubdirectoryModules(t *testing.T) {
	root := repo(t)
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")

	out := filepath.Join(t.TempDir(), "proxy")
	err := run(out, root, "", []string{"v1.0.0"}, []string{a, b})
	if err == nil || !strings.Contains(err.Error(), "example.com/r/a (a/): no tag names it; a proxy would serve it only from a tag a/vX.Y.Z") {
		t.Fatalf("a release tagged v1.0.0 only: got %v, want a refusal naming the tag a/vX.Y.Z", err)
	}
	if got := served(t, out, "example.com/r/a"); got != nil {
		t.Errorf("a is served at %v from the tag v1.0.0", got)
	}

	out = filepath.Join(t.TempDir(), "proxy")
	if err := run(out, root, "", []string{"a/v1.0.0", "b/v1.1.0", "v1.0.0"}, []string{a, b}); err != nil {
		t.Fatal(err)
	}
	if got := served(t, out, "example.com/r/a"); !slices.Equal(got, []string{"v1.0.0"}) {
		t.Errorf("a is served at %v, want [v1.0.0] (tag a/v1.0.0)", got)
	}
	if got := served(t, out, "example.com/r/b"); !slices.Equal(got, []string{"v1.1.0"}) {
		t.Errorf("b is served at %v, want [v1.1.0] (tag b/v1.1.0)", got)
	}

	for _, bad := range []string{"a/1.0.0", "a/v1.0", "a/v1.0.0+build"} {
		if err := run(filepath.Join(t.TempDir(), "proxy"), root, "", []string{bad}, []string{a}); err == nil {
			t.Errorf("tag %s: served, want a refusal (not a version a proxy serves)", bad)
		}
	}
}

// TestZipHoldsWhatAProxyWould: the module's files git tracks or would
// track, the repository's LICENSE, no ignored file and no nested module.
func TestZipHoldsWhatAProxyWould(t *testing.T) {
	root := repo(t)
	out := filepath.Join(t.TempDir(), "proxy")
	if err := run(out, root, "", []string{"a/v1.0.0"}, []string{filepath.Join(root, "a")}); err != nil {
		t.Fatal(err)
	}
	z, err := zip.OpenReader(filepath.Join(out, "example.com/r/a/@v/v1.0.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	var names []string
	for _, f := range z.File {
		names = append(names, strings.TrimPrefix(f.Name, "example.com/r/a@v1.0.0/"))
	}
	slices.Sort(names)
	if want := []string{"LICENSE", "a.go", "go.mod", "new.go"}; !slices.Equal(names, want) {
		t.Errorf("zip holds %v, want %v", names, want)
	}
}

// TestRecordSums: -gosum replaces the served modules' lines with the sums
// of what is served, in the go command's order, and keeps every other line.
func TestRecordSums(t *testing.T) {
	root := repo(t)
	gosum := filepath.Join(t.TempDir(), "go.sum")
	writeFile(t, gosum, "example.com/r/a v0.9.0 h1:old=\nexample.com/r/a v0.9.0/go.mod h1:oldmod=\n"+
		"example.com/z v1.0.0 h1:z=\nexample.com/z v1.0.0/go.mod h1:zmod=\ngithub.com/other v1.2.0 h1:o=\n")
	out := filepath.Join(t.TempDir(), "proxy")
	if err := run(out, root, gosum, []string{"a/v1.0.0"}, []string{filepath.Join(root, "a")}); err != nil {
		t.Fatal(err)
	}
	zipSum, err := dirhash.HashZip(filepath.Join(out, "example.com/r/a/@v/v1.0.0.zip"), dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(gosum)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("go.sum:\n%s\nwant 5 lines", got)
	}
	if want := "example.com/r/a v1.0.0 " + zipSum; lines[0] != want {
		t.Errorf("line 1 %q, want %q", lines[0], want)
	}
	if !strings.HasPrefix(lines[1], "example.com/r/a v1.0.0/go.mod h1:") {
		t.Errorf("line 2 %q, want a's go.mod sum", lines[1])
	}
	if want := []string{"example.com/z v1.0.0 h1:z=", "example.com/z v1.0.0/go.mod h1:zmod=", "github.com/other v1.2.0 h1:o="}; !slices.Equal(lines[2:], want) {
		t.Errorf("other lines %q, want them unchanged: %q", lines[2:], want)
	}
}
