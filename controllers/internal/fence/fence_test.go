package fence_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	// The fenced packages, linked so that go test's cache is invalidated
	// whenever their code, and so possibly their dependencies, change:
	// `go list` runs as a separate process the cache cannot see into.
	_ "github.com/magos-dev/magos/controllers/internal/conditions"
	_ "github.com/magos-dev/magos/controllers/internal/configtree"
	_ "github.com/magos-dev/magos/controllers/internal/rerror"
	_ "github.com/magos-dev/magos/controllers/internal/rollout/progress"
	_ "github.com/magos-dev/magos/controllers/internal/workspace/decide"
	_ "github.com/magos-dev/magos/controllers/internal/workspace/runjob"
	_ "github.com/magos-dev/magos/controllers/internal/workspaceset/setplan"
)

const (
	magos    = "github.com/magos-dev/magos/"
	internal = magos + "controllers/internal/"
	cli      = magos + "cli/internal/"
	// apiTypes is the API types package; what it links is light by
	// depguard's api-types-stay-light rule.
	apiTypes = magos + "apis/magos/v1alpha1"
)

// hcl is what configtree's parsing of configurations links: HCL and cty
// and their own pure dependencies.
var hcl = []string{
	"github.com/hashicorp/hcl/v2",
	"github.com/zclconf/go-cty/",
	"github.com/agext/levenshtein",
	"github.com/apparentlymart/go-textseg/",
	"github.com/mitchellh/go-wordwrap",
	"golang.org/x/text/",
}

// yaml is what the policy protocol's parsing links.
var yaml = []string{"sigs.k8s.io/yaml", "go.yaml.in/yaml/"}

// blake3 is what the artifact digests link besides the standard library.
var blake3 = []string{"github.com/zeebo/blake3", "github.com/klauspost/cpuid/"}

// pure are the pure packages, the other Magos packages each may link
// (besides the API module's) and the modules besides the light ones.
var pure = []struct {
	pkg     string
	magos   []string
	modules []string
}{
	{pkg: internal + "workspace/decide", magos: []string{internal + "workspace/runjob", internal + "conditions", internal + "rerror"}, modules: yaml},
	{pkg: internal + "workspace/runjob", magos: []string{internal + "rerror"}},
	{pkg: internal + "conditions", magos: []string{internal + "rerror"}},
	{pkg: internal + "rerror"},
	{pkg: internal + "configtree", modules: append(slices.Clone(hcl), blake3...)},
	{pkg: cli + "tfimport"},
	{pkg: cli + "planrender"},
	{pkg: magos + "apis/policyprotocol", modules: yaml},
	{pkg: internal + "rollout/progress", magos: []string{internal + "conditions", internal + "rerror"}},
	{pkg: internal + "workspaceset/setplan", magos: []string{internal + "conditions", internal + "rerror"}},
	{pkg: cli + "view", magos: []string{cli + "planchange"}},
	{pkg: cli + "planchange"},
}

// denied are the modules no pure package may link, whatever links them.
var denied = []string{
	"sigs.k8s.io/controller-runtime",
	"k8s.io/client-go",
	"github.com/prometheus/",
}

// ioImports are the standard packages no pure package, nor a Magos
// package it links, may import itself: the file system, processes and the
// network. (What the API types link imports some of them, for logging and
// errors; no pure code calls them.)
var ioImports = []string{"os", "os/exec", "os/signal", "net", "net/http", "syscall", "io/ioutil"}

// light are the module paths a pure package may link besides the standard
// library, its Magos packages and what the API types link.
var light = []string{
	magos + "apis/",
	"k8s.io/api/",
	"k8s.io/apimachinery/",
	"k8s.io/utils/",
}

// TestPurePackagesLinkNoIO: the pure packages' whole dependency sets hold
// only the standard library, the API module (not its generated client),
// apimachinery, the core API types, the Magos packages and modules the
// table allows; in particular no controller-runtime, client-go or
// Prometheus package, which a shared helper would bring in unseen by
// depguard; and neither they nor a Magos package they link imports the
// file system, processes or the network.
func TestPurePackagesLinkNoIO(t *testing.T) {
	goBin := goCommand(t)
	apiDeps := deps(t, goBin, apiTypes)
	for _, p := range pure {
		t.Run(strings.TrimPrefix(p.pkg, magos), func(t *testing.T) {
			graph := deps(t, goBin, p.pkg)
			require.Contains(t, graph, p.pkg, "go list lists the package itself")
			assert.Empty(t, violations(graph, p.pkg, p.magos, p.modules, apiDeps))
		})
	}
}

// TestFenceSeesTransitiveImports: the fence fails a package that links
// I/O only through another package: the metrics package, fenced as if
// pure, links Prometheus and controller-runtime, each named with the
// chain of imports that brings it in.
func TestFenceSeesTransitiveImports(t *testing.T) {
	goBin := goCommand(t)
	pkg := internal + "metrics"
	found := violations(deps(t, goBin, pkg), pkg, []string{internal + "rerror", internal + "runqueue"}, nil, deps(t, goBin, apiTypes))
	joined := strings.Join(found, "\n")
	assert.Contains(t, joined, "links I/O: "+pkg+" → github.com/prometheus/client_golang/prometheus")
	assert.Contains(t, joined, "links I/O: "+pkg+" → sigs.k8s.io/controller-runtime/pkg/client")
	assert.Contains(t, joined, " → github.com/prometheus/procfs", "a package linked only through another is found")
}

// TestFenceSeesIOInTheStandardLibrary: a package that links no denied
// module but opens files itself (the runner's plan file reader, fenced as
// if pure) fails, and so does a pure package that links it.
func TestFenceSeesIOInTheStandardLibrary(t *testing.T) {
	goBin := goCommand(t)
	pkg := magos + "runner/internal/planfile"
	found := violations(deps(t, goBin, pkg), pkg, nil, nil, deps(t, goBin, apiTypes))
	assert.Contains(t, found, "imports os: "+pkg)

	graph := map[string]pkgInfo{
		internal + "pure":   {imports: []string{"fmt", internal + "helper"}},
		internal + "helper": {imports: []string{"net/http"}},
		"fmt":               {standard: true, imports: []string{"os"}},
		"os":                {standard: true},
		"net/http":          {standard: true},
	}
	assert.Equal(t, []string{"imports net/http: " + internal + "pure → " + internal + "helper"},
		violations(graph, internal+"pure", []string{internal + "helper"}, nil, nil),
		"what the standard library imports is its own; what a Magos package imports is the fence's")
}

// violations lists what pkg links that a pure package may not, each with
// the import chain that links it: any package of a denied module, the
// generated client, a Magos package outside the API module not in
// allowed, a module outside the light ones and modules that the API types
// (apiDeps) do not link either; and every I/O package of the standard
// library that pkg or a Magos package it links imports itself.
func violations(graph map[string]pkgInfo, pkg string, allowed, modules []string, apiDeps map[string]pkgInfo) []string {
	var found []string
	for dep, info := range graph {
		if info.standard {
			continue
		}
		why := strings.Join(path(graph, pkg, dep), " → ")
		if strings.HasPrefix(dep, magos) {
			for _, imp := range info.imports {
				if slices.Contains(ioImports, imp) {
					found = append(found, "imports "+imp+": "+why)
				}
			}
		}
		if dep == pkg {
			continue
		}
		_, linkedByAPI := apiDeps[dep]
		switch {
		case prefixed(dep, denied):
			found = append(found, "links I/O: "+why)
		case strings.HasPrefix(dep, magos+"apis/client"):
			found = append(found, "links the generated client: "+why)
		case strings.HasPrefix(dep, magos+"apis/"):
		case strings.HasPrefix(dep, magos):
			if !slices.Contains(allowed, dep) {
				found = append(found, "links a Magos package the fence does not allow it (pure in fence_test.go): "+why)
			}
		case !linkedByAPI && !prefixed(dep, light) && !prefixed(dep, modules):
			found = append(found, "links a package outside the API module, apimachinery and the core API types: "+why)
		}
	}
	slices.Sort(found)
	return found
}

// goCommand is the go command; without it the fence fails under CI and
// skips elsewhere.
func goCommand(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the fence needs the go command on PATH: %v", err)
		}
		t.Skipf("the fence needs the go command on PATH to list dependencies: %v", err)
	}
	return goBin
}

// pkgInfo is one package of a dependency set.
type pkgInfo struct {
	standard bool
	imports  []string
}

// deps is the dependency set of pkg, itself included, by `go list -deps`.
func deps(t *testing.T, goBin, pkg string) map[string]pkgInfo {
	t.Helper()
	cmd := exec.Command(goBin, "list", "-deps", "-f", `{{.ImportPath}}{{if .Standard}} std{{end}}:{{range .Imports}} {{.}}{{end}}`, pkg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list -deps %s: %s", pkg, stderr.String())
	graph := map[string]pkgInfo{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		head, imports, ok := strings.Cut(sc.Text(), ":")
		require.True(t, ok, "go list line %q", sc.Text())
		name, std := strings.CutSuffix(head, " std")
		graph[name] = pkgInfo{standard: std, imports: strings.Fields(imports)}
	}
	require.NoError(t, sc.Err())
	return graph
}

// path is a shortest import chain from "from" to "to" in graph, both
// included; nil when there is none.
func path(graph map[string]pkgInfo, from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == to {
			var chain []string
			for ; p != ""; p = prev[p] {
				chain = append(chain, p)
			}
			slices.Reverse(chain)
			return chain
		}
		for _, next := range graph[p].imports {
			if _, seen := prev[next]; !seen {
				prev[next] = p
				queue = append(queue, next)
			}
		}
	}
	return nil
}

func prefixed(pkg string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(pkg, p) {
			return true
		}
	}
	return false
}
