package configtree

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"maps"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tarball packs files (path → content) as a Flux artifact.
func tarball(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, content := range files {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(content))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func read(t testing.TB, files map[string]string) *Tree {
	t.Helper()
	tree, err := Read(bytes.NewReader(tarball(t, files)))
	require.NoError(t, err)
	return tree
}

// monorepo is a repository with two environments calling a shared module,
// which calls another.
var monorepo = map[string]string{
	"README.md":                   "# infra",
	"envs/dev/main.tf":            `module "net" { source = "../../modules/net" }`,
	"envs/dev/terraform.tfvars":   `size = 1`,
	"envs/prod/main.tf":           `module "net" { source = "../../modules/net" }` + "\n" + `module "vpc" { source = "terraform-aws-modules/vpc/aws" }`,
	"envs/prod/files/policy.json": `{}`,
	"modules/net/main.tf":         `module "dns" { source = "../dns" }`,
	"modules/dns/main.tf.json":    `{"resource": {"terraform_data": {"x": {}}}}`,
	"modules/unused/main.tf":      `resource "terraform_data" "y" {}`,
}

func TestDigestCoversTheDirectoryAndTheLocalModulesItCalls(t *testing.T) {
	base := read(t, monorepo)
	prod, dirs := base.Digest("envs/prod")
	require.NotEmpty(t, prod)
	assert.Equal(t, []string{"envs/prod", "modules/net", "modules/dns"}, dirs)

	for _, tt := range []struct {
		name    string
		edit    map[string]string
		changes bool
	}{
		{"another environment", map[string]string{"envs/dev/terraform.tfvars": "size = 2"}, false},
		{"the README", map[string]string{"README.md": "# infra, again"}, false},
		{"a module nobody calls", map[string]string{"modules/unused/main.tf": "# gone"}, false},
		{"a new directory elsewhere", map[string]string{"envs/stage/main.tf": "# new"}, false},
		{"the Workspace's own file", map[string]string{"envs/prod/main.tf": monorepo["envs/prod/main.tf"] + "\n# edited"}, true},
		{"a file in a subdirectory of its path", map[string]string{"envs/prod/files/policy.json": `{"a": 1}`}, true},
		{"a new file in its path", map[string]string{"envs/prod/extra.tf": `locals {}`}, true},
		{"a module it calls", map[string]string{"modules/net/main.tf": monorepo["modules/net/main.tf"] + "\n# edited"}, true},
		{"a module called by a module it calls (JSON syntax)", map[string]string{"modules/dns/main.tf.json": `{"resource": {}}`}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := maps.Clone(monorepo)
			maps.Copy(files, tt.edit)
			got, _ := read(t, files).Digest("envs/prod")
			require.NotEmpty(t, got)
			assert.Equal(t, tt.changes, got != prod, "digest %s, before %s", got, prod)
		})
	}
}

func TestDigestOfTheRootCoversEverything(t *testing.T) {
	base, _ := read(t, monorepo).Digest("")
	files := maps.Clone(monorepo)
	files["README.md"] = "changed"
	got, _ := read(t, files).Digest(".")
	assert.NotEqual(t, base, got)
}

func TestDigestIsUnknownWhenACalledConfigurationDoesNotParse(t *testing.T) {
	files := maps.Clone(monorepo)
	files["modules/net/broken.tf"] = `module "x" {`
	tree := read(t, files)
	got, _ := tree.Digest("envs/prod")
	assert.Empty(t, got, "a module whose calls are unknown makes the digest unknown")
	dev, _ := tree.Digest("envs/dev")
	assert.Empty(t, dev)
	unused, _ := tree.Digest("modules/unused")
	assert.NotEmpty(t, unused, "a directory that reaches no unparsable file has a digest")

	files = maps.Clone(monorepo)
	files["envs/prod/main.tf"] = `module "net" { source = var.where }`
	got, _ = read(t, files).Digest("envs/prod")
	assert.Empty(t, got, "a module source that is not a literal makes the digest unknown")
}

func TestModuleSourcesOutsideTheArtifactAreIgnored(t *testing.T) {
	tree := read(t, map[string]string{"main.tf": `module "up" { source = "../../../elsewhere" }`})
	_, dirs := tree.Digest(".")
	assert.Equal(t, []string{"."}, dirs)
}
