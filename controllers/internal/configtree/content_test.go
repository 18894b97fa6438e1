package configtree

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"maps"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// monorepo is a repository with two environments calling a shared module,
// which calls another, and shared files the configuration reads.
var monorepo = map[string]string{
	"README.md":                   "# infra",
	"envs/dev/main.tf":            `module "net" { source = "../../modules/net" }`,
	"envs/dev/terraform.tfvars":   `size = 1`,
	"envs/prod/main.tf":           `module "net" { source = "../../modules/net" }` + "\n" + `module "vpc" {` + "\n" + `source = "terraform-aws-modules/vpc/aws"` + "\n" + `version = "5.1.2"` + "\n" + `}`,
	"envs/prod/data.tf":           `locals { data = jsondecode(file("${path.module}/../../shared/data.json")) }`,
	"envs/prod/files/policy.json": `{}`,
	"modules/net/main.tf":         `module "dns" { source = "../dns" }` + "\n" + `locals { cidr = file("${path.module}/../../shared/net.txt") }`,
	"modules/dns/main.tf.json":    `{"resource": {"terraform_data": {"x": {"input": "${file(\"${path.module}/../../shared/dns.txt\")}"}}}}`,
	"modules/unused/main.tf":      `resource "terraform_data" "y" {}`,
	"shared/data.json":            `{"a": 1}`,
	"shared/net.txt":              `10.0.0.0/16`,
	"shared/dns.txt":              `example.com`,
	"shared/other.json":           `{}`,
}

// outcome is what an edit does to a Workspace's digest.
type outcome int

const (
	same          outcome = iota // the digest stays: the revision may be carried
	changes                      // the digest changes: the revision is planned
	unknownDigest                // the digest is unknown: the revision is planned
)

func (o outcome) String() string { return [...]string{"same", "changes", "unknown"}[o] }

func outcomeOf(before, after Content) outcome {
	switch after.Digest {
	case "":
		return unknownDigest
	case before.Digest:
		return same
	}
	return changes
}

// edit returns base with the edits applied ("" deletes a file).
func edit(base, edits map[string]string) map[string]string {
	files := maps.Clone(base)
	for name, content := range edits {
		if content == "" {
			delete(files, name)
			continue
		}
		files[name] = content
	}
	return files
}

func TestContentOfTheMonorepo(t *testing.T) {
	base := read(t, monorepo).Content("envs/prod", Options{})
	require.NotEmpty(t, base.Digest, base.Unknown)
	assert.Equal(t, []string{"envs/prod", "shared/data.json", "modules/net", "shared/net.txt", "modules/dns", "shared/dns.txt"}, base.Read)

	for _, tt := range []struct {
		name string
		edit map[string]string
		want outcome
	}{
		{"another environment", map[string]string{"envs/dev/terraform.tfvars": "size = 2"}, same},
		{"the README", map[string]string{"README.md": "# infra, again"}, same},
		{"a module nobody calls", map[string]string{"modules/unused/main.tf": "# gone"}, same},
		{"a new directory elsewhere", map[string]string{"envs/stage/main.tf": "# new"}, same},
		{"a shared file nothing reads", map[string]string{"shared/other.json": `{"b": 2}`}, same},
		{"the Workspace's own file", map[string]string{"envs/prod/main.tf": monorepo["envs/prod/main.tf"] + "\n# edited"}, changes},
		{"a file in a subdirectory of its path", map[string]string{"envs/prod/files/policy.json": `{"a": 1}`}, changes},
		{"a new file in its path", map[string]string{"envs/prod/extra.tf": `locals {}`}, changes},
		{"a module it calls", map[string]string{"modules/net/main.tf": monorepo["modules/net/main.tf"] + "\n# edited"}, changes},
		{"a module called by a module it calls (JSON syntax)", map[string]string{"modules/dns/main.tf.json": `{"resource": {}}`}, changes},
		{"a shared file read by file(path.module)", map[string]string{"shared/data.json": `{"a": 2}`}, changes},
		{"a shared file read by file() in a local module", map[string]string{"shared/net.txt": `10.1.0.0/16`}, changes},
		{"a shared file read by file() in JSON syntax", map[string]string{"shared/dns.txt": `example.org`}, changes},
		{"a shared file read removed", map[string]string{"shared/data.json": ""}, changes},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := read(t, edit(monorepo, tt.edit)).Content("envs/prod", Options{})
			assert.Equal(t, tt.want, outcomeOf(base, got), "unknown: %s", got.Unknown)
		})
	}
}

// TestContentFollowsWhatTheEngineReads pins each way a configuration reads
// a file: for each, a configuration at envs/app and an edit to a file
// outside envs/app that the configuration reads (or not).
func TestContentFollowsWhatTheEngineReads(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	for _, tt := range []struct {
		name   string
		files  map[string]string // the configuration, besides shared/x.txt = "one"
		edit   map[string]string // the edit; nil changes shared/x.txt
		want   outcome
		reason string // part of Unknown
	}{
		// Path-reading functions with literal paths.
		{name: "file() relative to path.module", files: cfg(`locals { x = file("${path.module}/../../shared/x.txt") }`), want: changes},
		{name: "file() relative to path.root", files: cfg(`locals { x = file("${path.root}/../../shared/x.txt") }`), want: changes},
		{name: "file() relative to the working directory", files: cfg(`locals { x = file("../../shared/x.txt") }`), want: changes},
		{name: "core::file()", files: cfg(`locals { x = core::file("../../shared/x.txt") }`), want: changes},
		{name: "filebase64()", files: cfg(`locals { x = filebase64("${path.module}/../../shared/x.txt") }`), want: changes},
		{name: "filemd5()", files: cfg(`locals { x = filemd5("${path.module}/../../shared/x.txt") }`), want: changes},
		{name: "filesha1()", files: cfg(`locals { x = filesha1("${path.module}/../../shared/x.txt") }`), want: changes},
		{name: "filesha256()", files: cfg(`locals { x = filesha256("${path.module}/../../shared/x.txt") }`), want: changes},
		{name: "filesha512()", files: cfg(`locals { x = filesha512("${path.module}/../../shared/x.txt") }`), want: changes},
		{name: "filebase64sha256()", files: cfg(`locals { x = filebase64sha256("${path.module}/../../shared/x.txt") }`), want: changes},
		{name: "filebase64sha512()", files: cfg(`locals { x = filebase64sha512("${path.module}/../../shared/x.txt") }`), want: changes},
		{name: "fileexists() of a file that appears", files: cfg(`locals { x = fileexists("${path.module}/../../shared/y.txt") }`), edit: map[string]string{"shared/y.txt": "now"}, want: changes},
		{name: "templatefile()", files: cfg(`locals { x = templatefile("${path.module}/../../shared/x.txt", {}) }`), want: changes},
		{name: "templatefile() of a template that calls file()", files: withFile(cfg(`locals { x = templatefile("${path.module}/../../shared/t.tftpl", {}) }`), "shared/t.tftpl", `${file("x.txt")}`), want: unknownDigest, reason: "calls file(), which may read a path"},
		{name: "fileset(): a new file matches", files: cfg(`locals { x = fileset("${path.module}/../../shared", "*.txt") }`), edit: map[string]string{"shared/z.txt": "new"}, want: changes},
		{name: "fileset(): a file's content", files: cfg(`locals { x = [for f in fileset("${path.module}/../../shared", "*.txt") : file("${path.module}/../../shared/${f}")] }`), want: unknownDigest, reason: "not a literal"},
		{name: "file() in a variable's validation", files: cfg(`variable "v" {` + "\n" + `default = "a"` + "\n" + `validation {` + "\n" + `condition = var.v != file("${path.module}/../../shared/x.txt")` + "\n" + `error_message = "no"` + "\n" + `}` + "\n" + `}`), want: changes},
		{name: "file() in a heredoc", files: cfg("locals {\n x = <<EOT\n${file(\"${path.module}/../../shared/x.txt\")}\nEOT\n}"), want: changes},
		{name: "file() in a .tofu file", files: map[string]string{"envs/app/main.tofu": `locals { x = file("${path.module}/../../shared/x.txt") }`}, want: changes},
		{name: "file() in a .tf.json template", files: map[string]string{"envs/app/main.tf.json": `{"locals": {"x": "${file(\"${path.module}/../../shared/x.txt\")}"}}`}, want: changes},
		{name: "file() in a JSON object key", files: map[string]string{"envs/app/main.tf.json": `{"locals": {"x": {"${file(\"../../shared/x.txt\")}": 1}}}`}, want: changes},
		{name: "a module call in JSON array form", files: map[string]string{"envs/app/main.tf.json": `{"module": [{"m": [{"source": "../../modules/m"}]}]}`, "modules/m/main.tf": `locals {}`}, edit: map[string]string{"modules/m/main.tf": `locals { a = 1 }`}, want: changes},
		{name: "a JSON resource in array form reading a file", files: map[string]string{"envs/app/main.tf.json": `{"resource": [{"x_y": [{"z": [{"ca_file": "../../shared/x.txt"}]}]}]}`}, want: changes},
		{name: "a local_file data source in JSON array form", files: map[string]string{"envs/app/main.tf.json": `{"data": [{"local_file": {"x": {"filename": "out"}}}]}`}, want: unknownDigest, reason: "reads local files"},
		{name: "a JSON file repeating a block key", files: map[string]string{"envs/app/main.tf.json": `{"locals": {"a": 1}, "locals": {"x": "${file(\"../../shared/x.txt\")}"}}`}, want: changes},
		// Paths that cannot be followed.
		{name: "file() of a variable", files: cfg(`variable "p" {}` + "\n" + `locals { x = file(var.p) }`), want: unknownDigest, reason: "not a literal"},
		{name: "file() of a local", files: cfg(`locals {` + "\n" + `p = "../../shared/x.txt"` + "\n" + `x = file(local.p)` + "\n" + `}`), want: unknownDigest, reason: "not a literal"},
		{name: "file() of path.cwd", files: cfg(`locals { x = file("${path.cwd}/x") }`), want: unknownDigest, reason: "not a literal"},
		{name: "file() of an absolute path", files: cfg(`locals { x = file("/src/shared/x.txt") }`), want: unknownDigest, reason: "outside"},
		{name: "file() of a home path", files: cfg(`locals { x = file("~/x") }`), want: unknownDigest, reason: "outside"},
		{name: "file() leaving the artifact", files: cfg(`locals { x = file("../../../x") }`), want: unknownDigest, reason: "leaves the artifact"},
		{name: "a provider function", files: cfg(`locals { x = provider::local::direxists("../../shared") }`), want: unknownDigest, reason: "provider function"},
		{name: "templatestring()", files: cfg(`locals { x = templatestring(local.t, {}) }`), want: unknownDigest, reason: "templatestring"},
		{name: "a local_file data source", files: cfg(`data "local_file" "x" { filename = "../../shared/x.txt" }`), want: unknownDigest, reason: "reads local files"},
		{name: "an external data source", files: cfg(`data "external" "x" { program = ["sh", "x.sh"] }`), want: unknownDigest, reason: "runs local programs"},
		{name: "an archive_file data source", files: cfg(`data "archive_file" "x" {` + "\n" + `type = "zip"` + "\n" + `source_dir = "../../shared"` + "\n" + `}`), want: unknownDigest, reason: "reads local files"},
		{name: "a local_file resource (JSON syntax)", files: map[string]string{"envs/app/main.tf.json": `{"resource": {"local_file": {"x": {"filename": "out"}}}}`}, want: unknownDigest, reason: "reads local files"},
		{name: "terraform_remote_state with a local backend", files: cfg(`data "terraform_remote_state" "x" {` + "\n" + `backend = "local"` + "\n" + `config = { path = "../../shared/x.txt" }` + "\n" + `}`), want: unknownDigest, reason: "state file"},
		// Provider attributes naming files.
		{name: "a provider's file attribute", files: cfg(`provider "kubernetes" { config_path = "${path.module}/../../shared/x.txt" }`), want: changes},
		{name: "a resource's directory attribute", files: cfg(`resource "helm_release" "x" { chart_dir = "../../shared" }`), edit: map[string]string{"shared/chart/values.yaml": "a: 1"}, want: changes},
		{name: "a nested block's file attribute", files: cfg(`resource "x_y" "z" {` + "\n" + `settings { ca_file = "../../shared/x.txt" }` + "\n" + `}`), want: changes},
		{name: "a provider's file attribute from a variable", files: cfg(`variable "p" {}` + "\n" + `provider "kubernetes" { config_path = var.p }`), want: unknownDigest, reason: "not a literal"},
		{name: "a provider's file attribute outside the artifact", files: cfg(`provider "kubernetes" { config_path = "~/.kube/config" }`), want: unknownDigest, reason: "outside"},
		{name: "a provider's file attribute (JSON syntax)", files: map[string]string{"envs/app/main.tf.json": `{"provider": {"kubernetes": [{"config_path": "../../shared/x.txt"}]}}`}, want: changes},
		// Module sources in every local form.
		{name: "a module source with backslashes", files: callModule(`..\\..\\modules\\m`), want: changes},
		{name: "a module source with ./ and a doubled slash", files: map[string]string{"envs/app/main.tf": `module "m" { source = ".//../../modules/m/" }`, "modules/m/main.tf": `locals {}`}, edit: map[string]string{"modules/m/main.tf": `locals { a = 1 }`}, want: changes},
		{name: "a module source that is a JSON template", files: map[string]string{"envs/app/main.tf.json": `{"module": {"m": {"source": "${\"../../modules/m\"}"}}}`, "modules/m/main.tf": `locals {}`}, edit: map[string]string{"modules/m/main.tf": `locals { a = 1 }`}, want: changes},
		{name: "a module source from a variable (JSON template)", files: map[string]string{"envs/app/main.tf.json": `{"module": {"m": {"source": "${var.where}"}}}`}, want: unknownDigest, reason: "not a literal"},
		{name: "a module source from a local", files: map[string]string{"envs/app/main.tf": `module "m" { source = local.where }`}, want: unknownDigest, reason: "not a literal"},
		{name: "a module reading a file relative to the working directory", files: map[string]string{"envs/app/main.tf": `module "m" { source = "../../modules/m" }`, "modules/m/main.tf": `locals { x = file("data.txt") }`, "envs/app/data.txt": "a"}, edit: map[string]string{"modules/data.txt": "b"}, want: same},
		// Remote module sources.
		{name: "a registry module at an exact version", files: remote(`"hashicorp/consul/aws"`, `"1.2.3"`), want: same},
		{name: "a registry module at an exact version with =", files: remote(`"registry.example.com/a/b/c"`, `"= 1.2.3"`), want: same},
		{name: "a registry module at a range", files: remote(`"hashicorp/consul/aws"`, `"~> 1.2"`), want: unknownDigest, reason: "pin a version"},
		{name: "a registry module without a version", files: remote(`"hashicorp/consul/aws"`, ``), want: unknownDigest, reason: "pin a version"},
		{name: "a Git module at a commit", files: remote(`"git::https://example.com/m.git//sub?ref=`+sha+`"`, ``), want: same},
		{name: "a GitHub module at a commit", files: remote(`"github.com/a/b?ref=`+sha+`"`, ``), want: same},
		{name: "a Git module at a branch", files: remote(`"git::https://example.com/m.git?ref=main"`, ``), want: unknownDigest, reason: "pin a version"},
		{name: "a Git module at a tag", files: remote(`"git::https://example.com/m.git?ref=v1.2.3"`, ``), want: unknownDigest, reason: "pin a version"},
		{name: "a Git module without a ref", files: remote(`"github.com/a/b"`, ``), want: unknownDigest, reason: "pin a version"},
		{name: "an archive module", files: remote(`"https://example.com/m.zip"`, ``), want: unknownDigest, reason: "pin a version"},
		{name: "an absolute module path", files: remote(`"/opt/modules/m"`, ``), want: unknownDigest, reason: "pin a version"},
		// Links, as the runner extracts them.
		{name: "a symlinked configuration file", files: map[string]string{"envs/app/main.tf": symlinkTo + "../../shared/main.tf", "shared/main.tf": `locals {}`}, edit: map[string]string{"shared/main.tf": `locals { a = 1 }`}, want: changes},
		{name: "a symlinked configuration file that reads a file", files: map[string]string{"envs/app/main.tf": symlinkTo + "../../shared/main.tf", "shared/main.tf": `locals { x = file("${path.module}/../../shared/x.txt") }`}, want: changes},
		{name: "a symlinked module directory", files: map[string]string{"envs/app/main.tf": `module "m" { source = "./mods/m" }`, "envs/app/mods": symlinkTo + "../../modules", "modules/m/main.tf": `locals {}`}, edit: map[string]string{"modules/m/main.tf": `locals { a = 1 }`}, want: changes},
		{name: "a symlinked directory under the path", files: map[string]string{"envs/app/main.tf": `locals {}`, "envs/app/conf": symlinkTo + "../../shared"}, want: changes},
		{name: "a symlink retargeted", files: map[string]string{"envs/app/main.tf": `locals { x = file("conf") }`, "envs/app/conf": symlinkTo + "../../shared/x.txt", "shared/y.txt": "y"}, edit: map[string]string{"envs/app/conf": symlinkTo + "../../shared/y.txt"}, want: changes},
		{name: "a symlink leaving the artifact", files: map[string]string{"envs/app/main.tf": `locals {}`, "envs/app/conf": symlinkTo + "../../../etc"}, want: unknownDigest, reason: "leaves the artifact"},
		{name: "an absolute symlink", files: map[string]string{"envs/app/main.tf": `locals {}`, "envs/app/conf": symlinkTo + "/etc"}, want: unknownDigest, reason: "the runner refuses the artifact"},
		{name: "a symlink loop", files: map[string]string{"envs/app/main.tf": `locals {}`, "envs/app/a": symlinkTo + "b", "envs/app/b": symlinkTo + "a"}, want: unknownDigest, reason: "the runner refuses the artifact"},
		{name: "a hard-linked configuration file", files: map[string]string{"envs/app/main.tf": hardlinkTo + "shared/main.tf", "shared/main.tf": `locals {}`}, edit: map[string]string{"shared/main.tf": `locals { a = 1 }`}, want: changes},
		{name: "a hard link to a file read", files: map[string]string{"envs/app/main.tf": `locals { x = file("x.txt") }`, "envs/app/x.txt": hardlinkTo + "shared/x.txt"}, want: changes},
		{name: "a hard link to nothing", files: map[string]string{"envs/app/main.tf": `locals {}`, "envs/app/x.txt": hardlinkTo + "shared/none"}, want: unknownDigest, reason: "the runner refuses the artifact"},
		// Found by review: each of these was skipped before.
		{name: "a pinned remote module passed a path", files: cfg(`module "m" {` + "\n" + `source = "git::https://example.com/m.git?ref=` + sha + `"` + "\n" + `p = "${path.module}/../../shared/x.txt"` + "\n" + `}`), want: unknownDigest, reason: "a path it may read"},
		{name: "a pinned remote module passed a relative literal", files: cfg(`module "lambda" {` + "\n" + `source = "terraform-aws-modules/lambda/aws"` + "\n" + `version = "7.2.1"` + "\n" + `source_path = "../../src/fn"` + "\n" + `}`), want: unknownDigest, reason: "a path it may read"},
		{name: "a pinned remote module passed other values", files: cfg(`module "m" {` + "\n" + `source = "hashicorp/consul/aws"` + "\n" + `version = "1.2.3"` + "\n" + `name = "x"` + "\n" + `}`), want: same},
		{name: "a module reached through a link calls a module beside its target", files: map[string]string{"envs/app/main.tf": `module "a" { source = "./link" }`, "envs/app/link": symlinkTo + "../../modules/a", "modules/a/main.tf": `module "b" { source = "../b" }`, "modules/b/main.tf": `locals {}`}, edit: map[string]string{"modules/b/main.tf": `locals { b = 1 }`}, want: changes},
		{name: "a module reached through a link reads a file beside its target", files: map[string]string{"envs/app/main.tf": `module "a" { source = "./link" }`, "envs/app/link": symlinkTo + "../../modules/a", "modules/a/main.tf": `locals { x = file("${path.module}/../shared.txt") }`, "modules/shared.txt": "1"}, edit: map[string]string{"modules/shared.txt": "2"}, want: changes},
		{name: "a fileset pattern leaving its path", files: cfg(`locals { x = fileset(path.module, "../../shared/*.txt") }`), edit: map[string]string{"shared/b.txt": "new"}, want: changes},
		{name: "a fileset pattern that is not a literal", files: cfg(`locals { x = fileset(path.module, var.p) }`), want: unknownDigest, reason: "pattern that is not a literal"},
		{name: "templatestring in a template", files: withFile(cfg(`locals { x = templatefile("${path.module}/../../shared/t.tpl", { s = "$${file(\"../../shared/x.txt\")}" }) }`), "shared/t.tpl", `${templatestring(s, {})}`), want: unknownDigest, reason: "calls templatestring()"},
		{name: "a template that says file but calls nothing", files: withFile(cfg(`locals { x = templatefile("${path.module}/../../shared/t.yaml", {}) }`), "shared/t.yaml", "write_files:\n  - path: /etc/motd\n"), edit: map[string]string{"shared/t.yaml": "write_files: []\n"}, want: changes},
		{name: "a committed module manifest", files: map[string]string{"envs/app/main.tf": `module "a" { source = "./a" }`, "envs/app/a/main.tf": `locals {}`, "envs/app/.terraform/modules/modules.json": `{"Modules":[{"Key":"a","Source":"./a","Dir":"../../elsewhere"}]}`}, want: unknownDigest, reason: "module manifest"},
		{name: "a for expression binding path", files: cfg(`locals { x = [for path in [{ module = "../../shared" }] : file("${path.module}/x.txt")] }`), want: unknownDigest, reason: "hides path.module"},
		{name: "a module block without a source (an override)", files: map[string]string{"envs/app/main.tf": `module "vpc" {` + "\n" + `source = "ns/name/sys"` + "\n" + `version = "5.1.2"` + "\n" + `}`, "envs/app/main_override.tf": `module "vpc" { version = ">= 5.0" }`}, want: unknownDigest, reason: "has no source"},
		{name: "an artifact the runner refuses elsewhere", files: cfg(`locals {}`), edit: map[string]string{"other/dangling": symlinkTo + "none"}, want: unknownDigest, reason: "the runner refuses the artifact"},
		{name: "a hidden configuration file the engine ignores", files: map[string]string{"envs/app/main.tf": `locals {}`, "envs/app/.draft.tf": `module "x" {`}, edit: map[string]string{"envs/app/.draft.tf": `module "y" {`}, want: changes},
		// Configuration that does not parse.
		{name: "a file that does not parse", files: cfg(`module "x" {`), want: unknownDigest, reason: "does not parse"},
		{name: "a JSON file that does not parse", files: map[string]string{"envs/app/main.tf.json": `{"locals": `}, want: unknownDigest, reason: "does not parse"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := edit(map[string]string{"shared/x.txt": "one"}, tt.files)
			before := read(t, files).Content("envs/app", Options{})
			if tt.want != unknownDigest {
				require.NotEmpty(t, before.Digest, "the configuration's digest is unknown: %s", before.Unknown)
			}
			change := tt.edit
			if change == nil {
				change = map[string]string{"shared/x.txt": "two"}
			}
			after := read(t, edit(files, change)).Content("envs/app", Options{})
			assert.Equal(t, tt.want, outcomeOf(before, after), "unknown: %s", after.Unknown)
			if tt.reason != "" {
				assert.Contains(t, after.Unknown, tt.reason)
			}
		})
	}
}

// cfg is a configuration at envs/app.
func cfg(src string) map[string]string { return map[string]string{"envs/app/main.tf": src} }

func withFile(files map[string]string, name, content string) map[string]string {
	files[name] = content
	return files
}

// callModule is a configuration at envs/app calling source, a module whose
// file modules/m/main.tf the edit changes.
func callModule(source string) map[string]string {
	return map[string]string{
		"envs/app/main.tf":  `module "m" { source = "` + source + `" }`,
		"modules/m/main.tf": `locals { x = file("${path.module}/../../shared/x.txt") }`,
	}
}

// remote is a configuration at envs/app calling a remote module.
func remote(source, version string) map[string]string {
	src := `module "m" {` + "\n" + `source = ` + source + "\n"
	if version != "" {
		src += `version = ` + version + "\n"
	}
	return cfg(src + "}")
}

func TestContentOfASymlinkedPath(t *testing.T) {
	files := map[string]string{"envs/prod/main.tf": `locals {}`, "envs/stage": symlinkTo + "prod", "shared/x": "a"}
	before := read(t, files).Content("envs/stage", Options{})
	require.NotEmpty(t, before.Digest, before.Unknown)
	after := read(t, edit(files, map[string]string{"envs/prod/main.tf": `locals { a = 1 }`})).Content("envs/stage", Options{})
	assert.Equal(t, changes, outcomeOf(before, after), "a path that is a link reads its target")
	retarget := read(t, edit(files, map[string]string{"envs/dev/main.tf": `locals {}`, "envs/stage": symlinkTo + "dev"})).Content("envs/stage", Options{})
	assert.Equal(t, changes, outcomeOf(before, retarget))
	unrelated := read(t, edit(files, map[string]string{"shared/x": "b"})).Content("envs/stage", Options{})
	assert.Equal(t, same, outcomeOf(before, unrelated))
}

func TestContentOfThePathOutsideOrMissing(t *testing.T) {
	tree := read(t, monorepo)
	for _, dir := range []string{"../x", "envs/none", "README.md", "/etc"} {
		got := tree.Content(dir, Options{})
		assert.Empty(t, got.Digest, dir)
		assert.NotEmpty(t, got.Unknown, dir)
	}
	root := tree.Content("", Options{})
	require.NotEmpty(t, root.Digest, root.Unknown)
	assert.Equal(t, root.Digest, tree.Content(".", Options{}).Digest)
	readme := read(t, edit(monorepo, map[string]string{"README.md": "changed"})).Content(".", Options{})
	assert.Equal(t, changes, outcomeOf(root, readme), "the root's digest covers everything")
}

func TestTriggerPathsJoinTheDigest(t *testing.T) {
	opts := Options{TriggerPaths: []string{"shared/*.json", "docs/**/*.md"}}
	base := read(t, monorepo).Content("envs/prod", opts)
	require.NotEmpty(t, base.Digest, base.Unknown)
	for _, tt := range []struct {
		name string
		edit map[string]string
		want outcome
	}{
		{"a matched file", map[string]string{"shared/other.json": `{"b": 2}`}, changes},
		{"a new matched file", map[string]string{"shared/new.json": `{}`}, changes},
		{"a matched file deep under **", map[string]string{"docs/a/b/c.md": "x"}, changes},
		{"a matched file directly under **", map[string]string{"docs/c.md": "x"}, changes},
		{"a file no glob matches", map[string]string{"shared/other.yaml": "x", "docs/a.txt": "x"}, same},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := read(t, edit(monorepo, tt.edit)).Content("envs/prod", opts)
			assert.Equal(t, tt.want, outcomeOf(base, got))
		})
	}
	disabled := read(t, monorepo).Content("envs/prod", Options{Disabled: true})
	assert.Empty(t, disabled.Digest)
	assert.Contains(t, disabled.Unknown, "contentSkip")
}

func TestMatchGlob(t *testing.T) {
	for _, tt := range []struct {
		glob, name string
		want       bool
	}{
		{"shared/*.json", "shared/a.json", true},
		{"shared/*.json", "shared/a/b.json", false},
		{"**/*.json", "a.json", true},
		{"**/*.json", "a/b/c.json", true},
		{"a/**", "a/b/c", true},
		{"a/**/c", "a/c", true},
		{"a/**/c", "a/x/y/c", true},
		{"a/**/c", "a/x/y/d", false},
		{"/a/*", "a/b", true},
		{strings.Repeat("**/", 60) + "x", strings.Repeat("d/", 60) + "y", false},
	} {
		assert.Equal(t, tt.want, matchGlob(tt.glob, tt.name), "%s ~ %s", tt.glob, tt.name)
	}
}

// TestDigestEncodingCannotCollide: facts are length-prefixed, so a name
// or link target holding a newline cannot make two sets of facts hash
// alike (they did with "name\x00value\n").
func TestDigestEncodingCannotCollide(t *testing.T) {
	a := &facts{m: map[string]string{"a": "x\nb\x00y"}}
	b := &facts{m: map[string]string{"a": "x", "b": "y"}}
	assert.NotEqual(t, a.digest(), b.digest())
}

func TestContentCoversFileModes(t *testing.T) {
	data := func(mode int64) []byte {
		return tarballModes(t, map[string]int64{"envs/app/main.tf": 0o644, "envs/app/x.txt": mode})
	}
	a, err := Read(bytes.NewReader(data(0o644)))
	require.NoError(t, err)
	b, err := Read(bytes.NewReader(data(0o000)))
	require.NoError(t, err)
	ca, cb := a.Content("envs/app", Options{}), b.Content("envs/app", Options{})
	require.NotEmpty(t, ca.Digest, ca.Unknown)
	assert.NotEqual(t, ca.Digest, cb.Digest, "a file the runner can no longer read changes the digest")
}

// tarballModes packs files with the given modes, each holding its name.
func tarballModes(t *testing.T, files map[string]int64) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, mode := range files {
		content := "locals {}\n" // valid configuration, and content for the rest
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(content)), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(content))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	return buf.Bytes()
}
