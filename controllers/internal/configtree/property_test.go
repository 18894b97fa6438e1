package configtree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/tools/harness/testenv"
)

// A generated repository: a Workspace at envs/app whose configuration
// reads shared files in each way the engine can (file functions relative
// to path.module, path.root and the working directory, templatefile,
// fileset, fileexists, a symlinked file, JSON syntax) and calls local
// modules (in several local forms, through a symlinked directory), beside
// files it does not read. Every value read flows into a resource, so a
// change to any byte read changes the plan.
type genRepo struct {
	files map[string]string
	// relevant are the paths (and, ending in "/", the subtrees) whose
	// change changes what the plan reads.
	relevant []string
}

// reads are the ways a configuration reads a shared file, each an
// expression and the paths it makes relevant.
var reads = []struct {
	expr     string
	relevant []string
}{
	{`file("${path.module}/../../shared/a.txt")`, []string{"shared/a.txt"}},
	{`filesha256("../../shared/b.txt")`, []string{"shared/b.txt"}},
	{`tostring(fileexists("${path.root}/../../shared/d.txt"))`, []string{"shared/d.txt"}},
	{`templatefile("${path.module}/../../shared/t.tftpl", { x = "1" })`, []string{"shared/t.tftpl"}},
	{`join(",", sort(fileset("${path.module}/../../shared/set", "*.txt")))`, []string{"shared/set/"}},
	{`file("${path.module}/link.txt")`, []string{"envs/app/link.txt", "shared/e.txt"}},
}

// moduleForms are local sources of modules/m1 as OpenTofu accepts them.
var moduleForms = []string{`../../modules/m1`, `..\\..\\modules\\m1`, `.//../../modules/m1/`, `./../../modules/m1`}

func generate(r *rand.Rand) genRepo {
	g := genRepo{files: map[string]string{
		"README.md":              "# generated",
		"envs/other/main.tf":     `resource "terraform_data" "o" { input = "o" }`,
		"modules/unused/main.tf": `resource "terraform_data" "u" { input = "u" }`,
		"shared/a.txt":           "a1", "shared/b.txt": "b1", "shared/c.txt": "c1", "shared/e.txt": "e1",
		"shared/f.txt": "f1", "shared/g.txt": "g1", "shared/unread.txt": "u1",
		"shared/t.tftpl":   "t1 ${x}",
		"shared/set/1.txt": "s1", "shared/set/2.yaml": "s2",
		"modules/m1/main.tf":  `output "v" { value = file("${path.module}/../../shared/c.txt") }`,
		"modules/m2/main.tf":  `output "v" { value = file("${path.module}/data.txt") }`,
		"modules/m2/data.txt": "m2",
		"modules/m3/main.tf":  `output "v" { value = file("${path.module}/data.txt") }`,
		"modules/m3/data.txt": "m3",
	}, relevant: []string{"envs/app/"}}
	var inputs []string
	var src strings.Builder
	for i, rd := range reads {
		if r.IntN(2) == 0 {
			continue
		}
		fmt.Fprintf(&src, "locals {\n  r%d = %s\n}\n", i, rd.expr)
		inputs = append(inputs, fmt.Sprintf("local.r%d", i))
		g.relevant = append(g.relevant, rd.relevant...)
		if strings.Contains(rd.expr, "link.txt") {
			g.files["envs/app/link.txt"] = symlinkTo + "../../shared/e.txt"
		}
	}
	if r.IntN(2) == 0 {
		fmt.Fprintf(&src, "module \"m1\" {\n  source = \"%s\"\n}\n", moduleForms[r.IntN(len(moduleForms))])
		inputs = append(inputs, "module.m1.v")
		g.relevant = append(g.relevant, "modules/m1/", "shared/c.txt")
	}
	if r.IntN(3) == 0 {
		g.files["envs/app/mods"] = symlinkTo + "../../modules"
		src.WriteString("module \"m2\" {\n  source = \"./mods/m2\"\n}\n")
		inputs = append(inputs, "module.m2.v")
		g.relevant = append(g.relevant, "envs/app/mods", "modules/m2/")
	}
	if r.IntN(3) == 0 {
		g.files["envs/app/extra.tf.json"] = `{"resource": {"terraform_data": {"json": {"input": "${file(\"${path.module}/../../shared/f.txt\")}"}}}}`
		g.relevant = append(g.relevant, "shared/f.txt")
	}
	if r.IntN(3) == 0 {
		g.files["envs/app/m3.tf.json"] = `{"module": [{"m3": [{"source": "..\\\\..\\\\modules\\\\m3"}]}], "resource": [{"terraform_data": {"m3": {"input": "${module.m3.v}"}}}]}`
		g.relevant = append(g.relevant, "modules/m3/")
	}
	fmt.Fprintf(&src, "resource \"terraform_data\" \"reads\" {\n  input = [%s]\n}\n", strings.Join(inputs, ", "))
	g.files["envs/app/main.tf"] = src.String()
	return g
}

// mutation is one commit: the files it writes ("" deletes) and the paths
// it touches.
type mutation struct {
	edit    map[string]string
	touched []string
}

func mutate(r *rand.Rand, g genRepo) mutation {
	names := slices.Sorted(maps.Keys(g.files))
	switch r.IntN(6) {
	case 0:
		return mutation{edit: map[string]string{"shared/d.txt": "now"}, touched: []string{"shared/d.txt"}}
	case 1:
		name := fmt.Sprintf("shared/set/%d.txt", 3+r.IntN(3))
		return mutation{edit: map[string]string{name: "new"}, touched: []string{name}}
	case 2:
		if _, ok := g.files["envs/app/link.txt"]; ok {
			return mutation{edit: map[string]string{"envs/app/link.txt": symlinkTo + "../../shared/a.txt"}, touched: []string{"envs/app/link.txt"}}
		}
	case 3:
		name := names[r.IntN(len(names))]
		if !strings.HasSuffix(name, ".tf") && !strings.HasSuffix(name, ".json") && !strings.HasPrefix(g.files[name], symlinkTo) {
			return mutation{edit: map[string]string{name: ""}, touched: []string{name}}
		}
	}
	name := names[r.IntN(len(names))]
	content := g.files[name]
	switch {
	case strings.HasPrefix(content, symlinkTo):
		return mutation{edit: map[string]string{"shared/unread.txt": "u2"}, touched: []string{"shared/unread.txt"}}
	case strings.HasSuffix(name, ".tf"):
		content += "\n# edited\n"
	case strings.HasSuffix(name, ".tf.json"):
		content += "\n"
	case strings.HasSuffix(name, ".tftpl"):
		content = "t2 ${x}"
	default:
		content += "2"
	}
	return mutation{edit: map[string]string{name: content}, touched: []string{name}}
}

func (g genRepo) isRelevant(p string) bool {
	for _, r := range g.relevant {
		if p == r || (strings.HasSuffix(r, "/") && strings.HasPrefix(p, r)) {
			return true
		}
	}
	return false
}

// TestSkipIsSoundOnGeneratedRepositories: for thousands of generated
// repositories and commits, whenever the digest of envs/app stays the
// same (the revision would be carried without a plan), the commit touched
// nothing the configuration reads; and for a sample of those pairs, the
// real engine agrees: the new revision's plan against the state the old
// revision applied has no changes.
func TestSkipIsSoundOnGeneratedRepositories(t *testing.T) {
	cases := 3000
	r := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
	type pair struct {
		old, new map[string]string
	}
	var skipped []pair
	var taken, unknowns int
	start := time.Now()
	for range cases {
		g := generate(r)
		m := mutate(r, g)
		before := read(t, g.files).Content("envs/app", Options{})
		require.NotEmpty(t, before.Digest, "a generated configuration is fully followable: %s\n%s", before.Unknown, g.files["envs/app/main.tf"])
		after := read(t, edit(g.files, m.edit)).Content("envs/app", Options{})
		if after.Digest == "" {
			unknowns++
			continue
		}
		if after.Digest != before.Digest {
			continue
		}
		taken++
		for _, p := range m.touched {
			require.False(t, g.isRelevant(p), "the skip was taken although the commit changed %s, which the configuration reads:\n%s", p, g.files["envs/app/main.tf"])
		}
		skipped = append(skipped, pair{g.files, edit(g.files, m.edit)})
	}
	t.Logf("%d generated cases in %s: the skip taken in %d, the digest unknown in %d, no counterexample", cases, time.Since(start).Round(time.Millisecond), taken, unknowns)
	require.NotZero(t, taken, "some commits change nothing read")

	if testing.Short() {
		return
	}
	tofu := testenv.Tofu(t)
	samples := min(len(skipped), 96)
	start = time.Now()
	for i := range samples {
		p := skipped[r.IntN(len(skipped))]
		t.Run(fmt.Sprintf("engine-%02d", i), func(t *testing.T) {
			require.False(t, planChanges(t, tofu, p.old, p.new), "the skipped revision's plan has changes")
		})
	}
	t.Logf("the engine checked %d skipped commits in %s", samples, time.Since(start).Round(time.Millisecond))
}

// TestEngineCheckSeesAChange: the engine check of the property test fails
// where it should: a commit to a file read has changes.
func TestEngineCheckSeesAChange(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the engine")
	}
	tofu := testenv.Tofu(t)
	g := generate(rand.New(rand.NewPCG(1, 2)))
	g.files["envs/app/main.tf"] = `resource "terraform_data" "x" { input = file("${path.module}/../../shared/a.txt") }`
	require.False(t, planChanges(t, tofu, g.files, edit(g.files, map[string]string{"README.md": "x"})))
	require.True(t, planChanges(t, tofu, g.files, edit(g.files, map[string]string{"shared/a.txt": "a2"})))
}

// planChanges applies old with the engine, then plans new against that
// state and says whether the plan has changes.
func planChanges(t *testing.T, tofu string, old, new map[string]string) bool {
	state := filepath.Join(t.TempDir(), "terraform.tfstate")
	run := func(dir string, args ...string) (int, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, tofu, append([]string{"-chdir=" + filepath.Join(dir, "envs", "app")}, args...)...)
		cmd.Env = append(os.Environ(), "TF_IN_AUTOMATION=1", "TF_CLI_CONFIG_FILE=/dev/null")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), out.String()
		}
		require.NoError(t, err, out.String())
		return 0, out.String()
	}
	oldDir, newDir := materialize(t, old), materialize(t, new)
	for _, step := range [][]string{{"init", "-input=false", "-backend=false"}, {"apply", "-input=false", "-auto-approve", "-state=" + state}} {
		code, out := run(oldDir, step...)
		require.Zero(t, code, "tofu %s of the old revision:\n%s", step[0], out)
	}
	code, out := run(newDir, "init", "-input=false", "-backend=false")
	require.Zero(t, code, "tofu init of the new revision:\n%s", out)
	code, out = run(newDir, "plan", "-input=false", "-detailed-exitcode", "-state="+state)
	require.Contains(t, []int{0, 2}, code, "tofu plan of the new revision:\n%s", out)
	if code == 2 {
		t.Logf("the plan has changes:\n%s", out)
	}
	return code == 2
}

// materialize writes files (with symlinks) under a new directory.
func materialize(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o750))
		if target, ok := strings.CutPrefix(content, symlinkTo); ok {
			require.NoError(t, os.Symlink(filepath.FromSlash(target), p))
			continue
		}
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	}
	return dir
}
