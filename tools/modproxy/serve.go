package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	"golang.org/x/mod/zip"
)

// sum is a served module version's go.sum hashes: of its zip and of its
// go.mod.
type sum struct {
	Path, Version, Zip, Mod string
}

// serve writes module m at version into the proxy at out: its list, info,
// go.mod and zip, as GOPROXY's protocol names them.
func serve(out, root string, m mod, version string) (sum, error) {
	mv := module.Version{Path: m.Path, Version: version}
	escaped, err := module.EscapePath(mv.Path)
	if err != nil {
		return sum{}, err
	}
	at := filepath.Join(out, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return sum{}, err
	}
	files, err := moduleFiles(root, m)
	if err != nil {
		return sum{}, err
	}
	zipPath := filepath.Join(at, version+".zip")
	z, err := os.Create(zipPath)
	if err != nil {
		return sum{}, err
	}
	if err := zip.Create(z, mv, files); err != nil {
		z.Close()
		return sum{}, err
	}
	if err := z.Close(); err != nil {
		return sum{}, err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return sum{}, err
	}
	list, err := os.ReadFile(filepath.Join(at, "list"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return sum{}, err
	}
	if err := errors.Join(
		os.WriteFile(filepath.Join(at, "list"), append(list, version+"\n"...), 0o644),
		os.WriteFile(filepath.Join(at, version+".info"), info, 0o644),
		os.WriteFile(filepath.Join(at, version+".mod"), m.GoMod, 0o644)); err != nil {
		return sum{}, err
	}
	s := sum{Path: m.Path, Version: version}
	if s.Zip, err = dirhash.HashZip(zipPath, dirhash.Hash1); err != nil {
		return sum{}, err
	}
	s.Mod, err = dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(m.GoMod)), nil
	})
	return s, err
}

// moduleFiles are the files of m a proxy puts in its zip: those git
// archives of the tag's tree (here the files git tracks or would track:
// no ignored file), with the repository's LICENSE added when the module
// in a subdirectory has none, as the go command does. zip.Create leaves
// out nested modules. Outside a git repository, every file of the
// module's directory.
func moduleFiles(root string, m mod) ([]zip.File, error) {
	names, err := gitFiles(root, m)
	if err != nil {
		if names, err = walkFiles(m.Dir); err != nil {
			return nil, err
		}
	}
	var files []zip.File
	haveLicense := false
	for _, name := range names {
		full := filepath.Join(m.Dir, filepath.FromSlash(name))
		info, err := os.Lstat(full)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			return nil, err
		}
		if info.IsDir() {
			continue // a git submodule
		}
		files = append(files, diskFile{name, full, info})
		haveLicense = haveLicense || name == "LICENSE"
	}
	if !haveLicense && m.Subdir != "" {
		full := filepath.Join(root, "LICENSE")
		if info, err := os.Lstat(full); err == nil && info.Mode().IsRegular() {
			files = append(files, diskFile{"LICENSE", full, info})
		}
	}
	return files, nil
}

// gitFiles lists the files under m's directory that git tracks or would
// track, relative to it.
func gitFiles(root string, m mod) ([]string, error) {
	dir := m.Subdir
	if dir == "" {
		dir = "."
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", dir).Output()
	if err != nil {
		return nil, err
	}
	var names []string
	seen := map[string]bool{}
	for _, p := range strings.Split(string(out), "\x00") {
		if p == "" {
			continue
		}
		name := p
		if m.Subdir != "" {
			var ok bool
			if name, ok = strings.CutPrefix(p, m.Subdir+"/"); !ok {
				continue
			}
		}
		if !seen[name] { // a path both tracked and untracked (merge states) once
			seen[name] = true
			names = append(names, name)
		}
	}
	return names, nil
}

// walkFiles lists every regular file under dir, relative to it.
func walkFiles(dir string) ([]string, error) {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			names = append(names, filepath.ToSlash(rel))
		}
		return nil
	})
	return names, err
}

// diskFile is a file of the working tree, under its name in the zip.
type diskFile struct {
	name, path string
	info       fs.FileInfo
}

func (f diskFile) Path() string                 { return f.name }
func (f diskFile) Lstat() (fs.FileInfo, error)  { return f.info, nil }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.path) }
