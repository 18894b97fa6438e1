package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrNotInstalled means the requested engine version is not in the
// versions directory.
var ErrNotInstalled = errors.New("engine version not installed")

// Resolve returns the path of <versionsDir>/<engine>/<version>/<binary>,
// or an error wrapping ErrNotInstalled that lists the versions present.
func Resolve(versionsDir, engine, version, binary string) (string, error) {
	p := filepath.Join(versionsDir, engine, version, binary)
	fi, err := os.Stat(p)
	if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		return p, nil
	}
	available := Versions(versionsDir, engine, binary)
	list := "none"
	if len(available) > 0 {
		list = strings.Join(available, ", ")
	}
	return "", fmt.Errorf("%w: %s %s is not in %s (available: %s)", ErrNotInstalled, engine, version, versionsDir, list)
}

// Versions lists the versions of engine that hold an executable binary.
func Versions(versionsDir, engine, binary string) []string {
	entries, err := os.ReadDir(filepath.Join(versionsDir, engine))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		fi, err := os.Stat(filepath.Join(versionsDir, engine, e.Name(), binary))
		if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}
