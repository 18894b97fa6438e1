package artifact

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// FetchAndExtract downloads the artifact at url, verifies digest and
// extracts it into root (a new directory). The archive is kept at
// root+".tar.gz" only while it is being extracted.
func FetchAndExtract(ctx context.Context, f *Fetcher, url, digest, root string, limits Limits) error {
	archive := root + ".tar.gz"
	defer os.Remove(archive)
	if err := f.Fetch(ctx, url, digest, archive); err != nil {
		return err
	}
	file, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer file.Close()
	return Extract(file, root, limits)
}

// ConfigDir returns the directory rel (slash-separated, already checked to
// hold no "..") inside root, after checking that it exists, is a directory
// and, with links resolved, is still inside root.
func ConfigDir(root, rel string) (string, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(realRoot, filepath.FromSlash(rel))
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("path %q is not in the artifact", rel)
	}
	if !within(realRoot, real) {
		return "", fmt.Errorf("path %q leaves the artifact", rel)
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("path %q in the artifact is not a directory", rel)
	}
	return real, nil
}
