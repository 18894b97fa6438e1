package v1alpha1_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// The docs name the kinds, and count them and their controllers; these
// tests hold them to the API types and to the charts.

// repoRoot is the repository root, from this package's directory.
var repoRoot = filepath.Join("..", "..", "..")

// apiKinds are the kinds of the API: the types registered with a list.
func apiKinds(t *testing.T) []string {
	t.Helper()
	s := runtime.NewScheme()
	require.NoError(t, magosv1.AddToScheme(s))
	types := s.KnownTypes(magosv1.GroupVersion)
	var kinds []string
	for name := range types {
		if _, listed := types[name+"List"]; listed {
			kinds = append(kinds, name)
		}
	}
	sort.Strings(kinds)
	require.NotEmpty(t, kinds)
	return kinds
}

// controllerUnits are the controllers the chart installs, by its
// subcharts' names.
func controllerUnits(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(repoRoot, "charts", "magos", "charts", "*-controller"))
	require.NoError(t, err)
	var names []string
	for _, d := range dirs {
		names = append(names, filepath.Base(d))
	}
	sort.Strings(names)
	return names
}

// TestEveryKindHasItsControllerAndCRD: one controller binary, subchart and
// CRD per kind, and nothing else.
func TestEveryKindHasItsControllerAndCRD(t *testing.T) {
	kinds := apiKinds(t)
	var want, binaries []string
	for _, k := range kinds {
		want = append(want, strings.ToLower(k)+"-controller")
	}
	sort.Strings(want)
	assert.Equal(t, want, controllerUnits(t), "charts/magos/charts: one subchart per kind's controller")
	mains, err := filepath.Glob(filepath.Join(repoRoot, "controllers", "*", "main.go"))
	require.NoError(t, err)
	for _, m := range mains {
		if name := filepath.Base(filepath.Dir(m)); name != "policy-engine" {
			binaries = append(binaries, name+"-controller")
		}
	}
	sort.Strings(binaries)
	assert.Equal(t, want, binaries, "controllers/<kind>/main.go: one binary per kind")
	crds, err := filepath.Glob(filepath.Join(repoRoot, "charts", "magos-crds", "crds", "*.yaml"))
	require.NoError(t, err)
	assert.Len(t, crds, len(kinds), "charts/magos-crds/crds: one CRD per kind")
}

// docFiles are the user-facing texts that may name or count the kinds.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "CONTRIBUTING.md", "charts/magos/README.md", "charts/magos/templates/NOTES.txt"}
	for _, glob := range []string{"docs/*.md", "deploy/*/*.yaml", "charts/*/values.yaml", "charts/magos/charts/*/values.yaml"} {
		matches, err := filepath.Glob(filepath.Join(repoRoot, filepath.FromSlash(glob)))
		require.NoError(t, err)
		for _, m := range matches {
			rel, err := filepath.Rel(repoRoot, m)
			require.NoError(t, err)
			files = append(files, filepath.ToSlash(rel))
		}
	}
	return files
}

var numberWords = map[string]int{"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}

// counted matches a number before what it counts: Magos's kinds (custom
// resources, CRDs, "kinds" right after the number) or its controllers
// (controllers, controller binaries, subcharts).
var counted = regexp.MustCompile(`(?i)\b(one|two|three|four|five|six|seven|eight|nine|ten|\d+) (magos\.dev )?(custom resources|CRDs|kinds|controllers|controller binaries|subcharts)\b`)

// TestDocsCountKindsAndControllers: wherever the docs count custom
// resources, CRDs, kinds, controllers, controller binaries or subcharts,
// the number is the API's and the charts'.
func TestDocsCountKindsAndControllers(t *testing.T) {
	kinds, controllers := len(apiKinds(t)), len(controllerUnits(t))
	found := 0
	for _, f := range docFiles(t) {
		data, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(f)))
		require.NoError(t, err)
		text := strings.Join(strings.Fields(string(data)), " ") // a phrase may wrap
		for _, m := range counted.FindAllStringSubmatch(text, -1) {
			n, ok := numberWords[strings.ToLower(m[1])]
			if !ok {
				var err error
				n, err = strconv.Atoi(m[1])
				require.NoError(t, err)
			}
			want := controllers
			switch strings.ToLower(m[3]) {
			case "custom resources", "crds", "kinds":
				want = kinds
			}
			found++
			assert.Equal(t, want, n, "%s says %q: there are %d", f, m[0], want)
		}
	}
	assert.NotZero(t, found, "the docs count the kinds and controllers somewhere")
}

// TestREADMENamesEveryKind: the README's list of the kinds and its Status
// row of the API name the API's kinds.
func TestREADMENamesEveryKind(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	require.NoError(t, err)
	readme := string(data)
	var listed []string
	for _, m := range regexp.MustCompile(`(?m)^- \*\*([A-Z][A-Za-z]+)\*\*:`).FindAllStringSubmatch(readme, -1) {
		listed = append(listed, m[1])
	}
	sort.Strings(listed)
	assert.Equal(t, apiKinds(t), listed, "README.md's list of the kinds (- **Kind**: …)")
	row := regexp.MustCompile(`(?m)^\| API: .*$`).FindString(readme)
	require.NotEmpty(t, row, "README.md's Status table has a row | API: …")
	for _, k := range apiKinds(t) {
		assert.Regexp(t, `\b`+k+`\b`, row, "README.md's Status row of the API names %s", k)
	}
}

// TestDocsIndexLinksEveryPage: docs/README.md links every page of docs/,
// and the README links the index and every page.
func TestDocsIndexLinksEveryPage(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	require.NoError(t, err)
	index, err := os.ReadFile(filepath.Join(repoRoot, "docs", "README.md"))
	require.NoError(t, err)
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	require.NoError(t, err)
	link := regexp.MustCompile(`\]\(([^)#]+)`)
	links := func(text []byte, dir string) []string {
		var out []string
		for _, m := range link.FindAllSubmatch(text, -1) {
			if target := string(m[1]); !strings.Contains(target, "://") {
				out = append(out, filepath.ToSlash(filepath.Clean(filepath.Join(dir, target))))
			}
		}
		return out
	}
	fromIndex, fromReadme := links(index, "docs"), links(readme, ".")
	assert.Contains(t, fromReadme, "docs/README.md", "README.md links the docs index")
	for _, p := range pages {
		page := "docs/" + filepath.Base(p)
		if page == "docs/README.md" {
			continue
		}
		assert.True(t, slices.Contains(fromIndex, page), "docs/README.md does not link %s", page)
		assert.True(t, slices.Contains(fromReadme, page), "README.md does not link %s", page)
	}
	for _, l := range append(fromIndex, fromReadme...) {
		if !strings.HasSuffix(l, ".md") {
			continue
		}
		_, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(l)))
		assert.NoError(t, err, "a link to %s, which does not exist", l)
	}
}
