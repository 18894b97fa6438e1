package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// tag is a release tag as a proxy reads it: the subdirectory of the module
// it versions ("" for the repository root) and the version.
type tag struct {
	Name, Subdir, Version string
}

// parseTag splits a tag vX.Y.Z or <subdirectory>/vX.Y.Z.
func parseTag(s string) (tag, error) {
	subdir, version := "", s
	if i := strings.LastIndex(s, "/"); i >= 0 {
		subdir, version = s[:i], s[i+1:]
	}
	if !semver.IsValid(version) || semver.Canonical(version) != version {
		return tag{}, fmt.Errorf("tag %q: %q is not a version vX.Y.Z a proxy serves a module at", s, version)
	}
	return tag{Name: s, Subdir: subdir, Version: version}, nil
}

// mod is a module of the repository and the versions its tags give it.
type mod struct {
	Dir      string // its directory
	Subdir   string // slash-separated, relative to the repository root; "" at the root
	Path     string // its module path
	GoMod    []byte
	Versions []string
}

// resolve reads the modules in dirs and gives each the versions of the
// tags that name its subdirectory; unused are the tags naming none of them.
func resolve(root string, dirs, tagNames []string) (mods []mod, unused []tag, err error) {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return nil, nil, err
	}
	tags := make([]tag, 0, len(tagNames))
	for _, name := range tagNames {
		t, err := parseTag(name)
		if err != nil {
			return nil, nil, err
		}
		tags = append(tags, t)
	}
	used := make([]bool, len(tags))
	for _, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, nil, err
		}
		rel, err := filepath.Rel(absRoot, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, nil, fmt.Errorf("%s is not inside the repository %s", dir, root)
		}
		m := mod{Dir: abs, Subdir: filepath.ToSlash(rel)}
		if m.Subdir == "." {
			m.Subdir = ""
		}
		if m.GoMod, err = os.ReadFile(filepath.Join(abs, "go.mod")); err != nil {
			return nil, nil, err
		}
		mf, err := modfile.ParseLax("go.mod", m.GoMod, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", dir, err)
		}
		if mf.Module == nil {
			return nil, nil, fmt.Errorf("%s/go.mod has no module line", dir)
		}
		m.Path = mf.Module.Mod.Path
		for i, t := range tags {
			if t.Subdir != m.Subdir {
				continue
			}
			if err := module.Check(m.Path, t.Version); err != nil {
				return nil, nil, fmt.Errorf("tag %s: %w", t.Name, err)
			}
			used[i] = true
			m.Versions = append(m.Versions, t.Version)
		}
		mods = append(mods, m)
	}
	for i, t := range tags {
		if !used[i] {
			unused = append(unused, t)
		}
	}
	return mods, unused, nil
}
