package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// recordSums writes the sums of the served modules into the go.sum at
// path: every line of those modules' paths is replaced by the served
// versions' lines; other lines stay. The lines are sorted as the go
// command sorts them.
func recordSums(path string, sums []sum) error {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	served := map[string]bool{}
	for _, s := range sums {
		served[s.Path] = true
	}
	type line struct {
		mod  module.Version
		hash string
	}
	var lines []line
	for i, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		f := strings.Fields(l)
		if len(f) != 3 {
			return fmt.Errorf("%s:%d: not a go.sum line: %q", path, i+1, l)
		}
		if !served[f[0]] {
			lines = append(lines, line{module.Version{Path: f[0], Version: f[1]}, f[2]})
		}
	}
	for _, s := range sums {
		lines = append(lines,
			line{module.Version{Path: s.Path, Version: s.Version}, s.Zip},
			line{module.Version{Path: s.Path, Version: s.Version + "/go.mod"}, s.Mod})
	}
	sort.SliceStable(lines, func(i, j int) bool { return goSumLess(lines[i].mod, lines[j].mod) })
	var b bytes.Buffer
	for _, l := range lines {
		fmt.Fprintf(&b, "%s %s %s\n", l.mod.Path, l.mod.Version, l.hash)
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// goSumLess orders go.sum lines as module.Sort does: by path, then by
// version, a version's zip line before its go.mod line.
func goSumLess(a, b module.Version) bool {
	if a.Path != b.Path {
		return a.Path < b.Path
	}
	va, aMod := strings.CutSuffix(a.Version, "/go.mod")
	vb, bMod := strings.CutSuffix(b.Version, "/go.mod")
	if va != vb {
		if c := semver.Compare(va, vb); c != 0 {
			return c < 0
		}
		return va < vb
	}
	return !aMod && bMod
}
