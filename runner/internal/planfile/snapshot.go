package planfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// ErrMismatch means the saved plan's snapshot or backend is not what the
// apply was given.
var ErrMismatch = errors.New("the saved plan does not match")

// initManifest is where init records the modules it installed, relative
// to the root module's directory.
const initManifest = ".terraform/modules/modules.json"

// NeedsInstalledModules reports whether the snapshot has a module that
// init installs (any source but a local path): CheckSnapshot can compare
// it only after the apply's own init.
func (f *File) NeedsInstalledModules() bool {
	for _, m := range f.Modules {
		if m.Key != "" && !localSource(m.Source) {
			return true
		}
	}
	return false
}

// CheckSnapshot compares the configuration snapshot with the configuration
// on disk: configDir is the root module's directory inside root, the
// extracted, digest-verified artifact. Every module must sit where its
// call puts it (a local path inside root, or where the apply's own init
// installed it) and hold exactly the configuration files the engine would
// load there, byte for byte. Directory paths in the snapshot are not
// trusted: the engine evaluates path.module from them, so they must equal
// the ones derived here.
func (f *File) CheckSnapshot(root, configDir string) error {
	var installed map[string]Module
	dirs := map[string]string{} // key → directory relative to configDir
	for _, m := range f.Modules {
		var dir string
		switch {
		case m.Key == "":
			dir = "."
		case localSource(m.Source):
			parent, ok := dirs[parentKey(m.Key)]
			if !ok {
				return fmt.Errorf("%w: module %q has no parent module in the snapshot", ErrMismatch, m.Key)
			}
			dir = path.Clean(path.Join(parent, m.Source))
		default:
			if installed == nil {
				var err error
				if installed, err = readInitManifest(configDir); err != nil {
					return err
				}
			}
			im, ok := installed[m.Key]
			if !ok || im.Source != m.Source {
				return fmt.Errorf("%w: module %q (%s) is not the module init installed for that call", ErrMismatch, m.Key, m.Source)
			}
			dir = path.Clean(im.Dir)
		}
		if path.Clean(m.Dir) != dir {
			return fmt.Errorf("%w: module %q is recorded in directory %q, not %q", ErrMismatch, m.Key, m.Dir, dir)
		}
		dirs[m.Key] = dir
		abs := filepath.Join(configDir, filepath.FromSlash(dir))
		if rel, err := filepath.Rel(root, abs); err != nil || !filepath.IsLocal(rel) && rel != "." {
			return fmt.Errorf("%w: module %q is outside the artifact (%s)", ErrMismatch, m.Key, dir)
		}
		if err := compareModule(m, abs); err != nil {
			return err
		}
	}
	return nil
}

// compareModule compares a module's snapshot with its directory.
func compareModule(m Module, dir string) error {
	onDisk, err := configFiles(dir)
	if err != nil {
		return fmt.Errorf("%w: module %q: %w", ErrMismatch, m.Key, err)
	}
	names := make([]string, 0, len(m.Files))
	for name := range m.Files {
		names = append(names, name)
	}
	sort.Strings(names)
	if !slices.Equal(names, onDisk) {
		return fmt.Errorf("%w: module %q has files %s in the plan, %s in the configuration", ErrMismatch, label(m.Key), list(names), list(onDisk))
	}
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("%w: module %q: %w", ErrMismatch, m.Key, err)
		}
		if !bytes.Equal(b, m.Files[name]) {
			return fmt.Errorf("%w: %s of module %s differs from the configuration", ErrMismatch, name, label(m.Key))
		}
	}
	return nil
}

// configFiles lists, sorted, the files of dir the engine loads as a
// module: *.tf, *.tf.json, *.tofu and *.tofu.json (primary and override
// files alike), but not test files, hidden or editor files, and not a .tf
// file that a .tofu file of the same name replaces.
func configFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() || ignored(e.Name()) || configExt(e.Name()) == "" {
			continue
		}
		names = append(names, e.Name())
	}
	out := names[:0:0]
	for _, n := range names {
		ext := configExt(n)
		if strings.HasPrefix(ext, ".tf") && slices.Contains(names, strings.TrimSuffix(n, ext)+strings.Replace(ext, ".tf", ".tofu", 1)) {
			continue
		}
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

// configExt is the configuration extension of name, "" for other files.
func configExt(name string) string {
	for _, ext := range []string{".tf.json", ".tofu.json", ".tf", ".tofu"} {
		if strings.HasSuffix(name, ext) {
			return ext
		}
	}
	return ""
}

// ignored matches the engine's ignored files: hidden, editor backups and
// lock files.
func ignored(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasSuffix(name, "~") ||
		(strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#"))
}

// readInitManifest reads the modules the apply's own init installed.
func readInitManifest(configDir string) (map[string]Module, error) {
	b, err := os.ReadFile(filepath.Join(configDir, filepath.FromSlash(initManifest)))
	if err != nil {
		return nil, fmt.Errorf("%w: the plan has installed modules and init has not installed them here: %w", ErrMismatch, err)
	}
	var doc struct{ Modules []Module }
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%w: reading %s: %w", ErrMismatch, initManifest, err)
	}
	out := make(map[string]Module, len(doc.Modules))
	for _, m := range doc.Modules {
		out[m.Key] = m
	}
	return out, nil
}

// localSource says whether a module source is a local path.
func localSource(s string) bool { return strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") }

// parentKey is the key of the module that calls key.
func parentKey(key string) string {
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		return key[:i]
	}
	return ""
}

func label(key string) string {
	if key == "" {
		return "(root)"
	}
	return key
}

func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
