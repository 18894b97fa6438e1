package configtree

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each of these, parsed by HCL without bounds, recurses past Go's stack
// limit (a fatal error that kills the controller) or close to it.
var hostile = map[string]string{
	"brackets":            "locals { x = " + strings.Repeat("[", 400_000) + " }",
	"braces":              "locals { x = " + strings.Repeat("{a=", 100_000) + " }",
	"parentheses":         "locals { x = " + strings.Repeat("(", 400_000) + " }",
	"interpolations":      `locals { x = "` + strings.Repeat("${\"", 100_000) + `" }`,
	"negations":           "locals { x = " + strings.Repeat("!", 400_000) + "true }",
	"minus signs":         "locals { x = " + strings.Repeat("-", 400_000) + "1 }",
	"conditionals":        "locals { x = " + strings.Repeat("true ? 1 : ", 40_000) + "1 }",
	"template directives": `locals { x = "` + strings.Repeat("%{ if true }", 40_000) + `" }`,
	"blocks":              strings.Repeat("a {\n", 100_000),
	"splats":              "locals { x = a" + strings.Repeat("[*]", 160_000) + " }",
	"traversals":          "locals { x = a" + strings.Repeat(".b", 200_000) + " }",
	"indexes":             `module "m" { source = a` + strings.Repeat("[b]", 150_000) + " }",
	"sums":                `module "m" { source = 1` + strings.Repeat("+1", 200_000) + " }",
	"products":            "locals { x = 1" + strings.Repeat("*1", 200_000) + " }",
}

var hostileJSON = map[string]string{
	"arrays":          `{"locals": {"x": ` + strings.Repeat("[", 300_000) + `}}`,
	"objects":         `{"locals": {"x": ` + strings.Repeat(`{"a":`, 100_000) + `}}`,
	"a template":      `{"locals": {"x": "` + strings.Repeat("${[", 100_000) + `"}}`,
	"a template key":  `{"locals": {"x": {"` + strings.Repeat("${(", 100_000) + `": 1}}}`,
	"a module source": `{"module": {"m": {"source": "` + strings.Repeat("${[", 100_000) + `"}}}`,
	"a splat":         `{"locals": {"x": "${a` + strings.Repeat("[*]", 160_000) + `}"}}`,
}

func TestHostileConfigurationStallsOnlyWhatReadsIt(t *testing.T) {
	for name, src := range hostile {
		t.Run(name, func(t *testing.T) { hostileCase(t, "envs/bad/main.tf", src) })
	}
	for name, src := range hostileJSON {
		t.Run("JSON "+name, func(t *testing.T) { hostileCase(t, "envs/bad/main.tf.json", src) })
	}
}

func hostileCase(t *testing.T, file, src string) {
	files := edit(monorepo, map[string]string{
		file:                src,
		"envs/uses/main.tf": `module "bad" { source = "../bad" }`,
	})
	tree := read(t, files)
	good := tree.Content("envs/prod", Options{})
	assert.NotEmpty(t, good.Digest, "a Workspace that does not read the file is unaffected: %s", good.Unknown)
	for _, dir := range []string{"envs/bad", "envs/uses"} {
		got := tree.Content(dir, Options{})
		require.NotNil(t, got.Refused, "%s reads the file: %s", dir, got.Unknown)
		assert.Equal(t, "envs/bad/"+file[len("envs/bad/"):], got.Refused.File)
		assert.Empty(t, got.Digest)
	}
	assert.Contains(t, tree.Dirs(), "envs/bad", "listing directories parses nothing")
}

func TestReadIsBounded(t *testing.T) {
	big := strings.Repeat("# comment\n", 60_000) // 600 kB: over the per-file bound
	tree := read(t, edit(monorepo, map[string]string{"envs/prod/big.tf": big}))
	got := tree.Content("envs/prod", Options{})
	assert.Empty(t, got.Digest)
	assert.Contains(t, got.Unknown, "larger than the controller parses")
	assert.NotEmpty(t, tree.Content("envs/dev", Options{}).Digest)

	limits := DefaultLimits()
	limits.MaxConfigBytes = 200
	small, err := ReadLimited(bytes.NewReader(tarball(t, monorepo)), limits)
	require.NoError(t, err)
	assert.Contains(t, small.Content("envs/prod", Options{}).Unknown, "larger than the controller parses",
		"configuration beyond the total budget is not kept, and what reads it is unknown")

	limits = DefaultLimits()
	limits.MaxEntries = 3
	_, err = ReadLimited(bytes.NewReader(tarball(t, monorepo)), limits)
	require.ErrorIs(t, err, ErrTooLarge)

	limits = DefaultLimits()
	limits.MaxNameBytes = 40
	_, err = ReadLimited(bytes.NewReader(tarball(t, monorepo)), limits)
	require.ErrorIs(t, err, ErrTooLarge, "names count against a budget of their own")

	limits = DefaultLimits()
	limits.MaxBytes = 10
	_, err = ReadLimited(bytes.NewReader(tarball(t, monorepo)), limits)
	require.ErrorIs(t, err, ErrTooLarge)
}

// tarEntry is one entry of an ordered test archive: a regular file, or a
// symlink when link is set.
type tarEntry struct{ name, content, link string }

func tarballOrdered(t testing.TB, entries []tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		if e.link != "" {
			require.NoError(t, tw.WriteHeader(&tar.Header{Name: e.name, Typeflag: tar.TypeSymlink, Linkname: e.link, Mode: 0o777}))
			continue
		}
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.content)), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(e.content))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// TestEntriesAsTheRunnerExtractsThem: what the runner refuses to extract is
// unknown, and a name listed twice has its last content.
func TestEntriesAsTheRunnerExtractsThem(t *testing.T) {
	for _, tt := range []struct {
		name    string
		entries []tarEntry
	}{
		{"a link over a file", []tarEntry{{name: "envs/app/main.tf", content: `locals {}`}, {name: "envs/app/x", content: "a"}, {name: "envs/app/x", link: "../../shared"}}},
		{"a file over a link", []tarEntry{{name: "envs/app/main.tf", content: `locals {}`}, {name: "envs/app/x", link: "../../shared"}, {name: "envs/app/x", content: "a"}}},
		{"a file under a link", []tarEntry{{name: "envs/app/main.tf", content: `locals {}`}, {name: "envs/app/l", link: "../../shared"}, {name: "envs/app/l/x", content: "a"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tree, err := Read(bytes.NewReader(tarballOrdered(t, tt.entries)))
			require.NoError(t, err)
			assert.Contains(t, tree.Content("envs/app", Options{}).Unknown, "the runner refuses the artifact")
		})
	}
	twice := func(last string) Content {
		tree, err := Read(bytes.NewReader(tarballOrdered(t, []tarEntry{
			{name: "envs/app/main.tf", content: `locals { a = 1 }`}, {name: "envs/app/main.tf", content: last},
		})))
		require.NoError(t, err)
		return tree.Content("envs/app", Options{})
	}
	a, b := twice(`locals {}`), twice(`locals { b = 1 }`)
	require.NotEmpty(t, a.Digest)
	assert.NotEqual(t, a.Digest, b.Digest, "the last of two entries of one name is what the engine reads")
	bad := twice(`module "m" {`)
	assert.Contains(t, bad.Unknown, "does not parse", "the last entry is the one parsed")
}
