package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Mode bits of the files and directories the provider creates.
const (
	fileMode fs.FileMode = 0o644
	dirMode  fs.FileMode = 0o755
)

// files does the provider's file I/O. With an empty root, paths are used as
// given (relative ones against the working directory of OpenTofu). With a
// root, every path is resolved under it and all I/O goes through an os.Root,
// so neither ".." nor a symlink can reach outside it.
type files struct {
	root string
}

// newFiles returns the files of a provider configured with root, made
// absolute so that it does not depend on a later change of directory.
func newFiles(root string) (*files, error) {
	if root == "" {
		return &files{}, nil
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("resolving root %q: %w", root, err)
	}
	return &files{root: abs}, nil
}

// errEscapesRoot is wrapped by every error for a path outside the root.
var errEscapesRoot = errors.New("paths must stay inside the provider root")

// relative returns p relative to the root. It fails with a clear error,
// wrapping errEscapesRoot, when p is empty, names the root itself or lies
// outside it. An absolute p is accepted only when it lies inside the root.
func (f *files) relative(p string) (string, error) {
	if p == "" {
		return "", errors.New("path must not be empty")
	}
	rel := filepath.Clean(p)
	if filepath.IsAbs(p) {
		r, err := filepath.Rel(f.root, rel)
		if err != nil {
			return "", fmt.Errorf("path %q escapes root %q: %w", p, f.root, errEscapesRoot)
		}
		rel = r
	}
	if rel == "." {
		return "", fmt.Errorf("path %q names root %q itself, not a file inside it", p, f.root)
	}
	if !filepath.IsLocal(rel) {
		return "", fmt.Errorf("path %q escapes root %q: %w", p, f.root, errEscapesRoot)
	}
	return rel, nil
}

// Check reports whether p is a usable path, without touching the disk.
func (f *files) Check(p string) error {
	if f.root == "" {
		if p == "" {
			return errors.New("path must not be empty")
		}
		return nil
	}
	_, err := f.relative(p)
	return err
}

// ReadFile returns the contents of p. A missing file yields an error for
// which errors.Is(err, fs.ErrNotExist) holds.
func (f *files) ReadFile(p string) ([]byte, error) {
	if f.root == "" {
		return os.ReadFile(p)
	}
	rel, err := f.relative(p)
	if err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(f.root)
	if err != nil {
		return nil, fmt.Errorf("opening root: %w", err)
	}
	defer r.Close()
	data, err := r.ReadFile(rel)
	if err != nil {
		return nil, fmt.Errorf("reading %q under root %q: %w", p, f.root, err)
	}
	return data, nil
}

// WriteFile writes data to p with mode 0644, creating the parent
// directories (and the root) as needed.
func (f *files) WriteFile(p string, data []byte) error {
	if f.root == "" {
		if err := os.MkdirAll(filepath.Dir(p), dirMode); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, fileMode); err != nil {
			return err
		}
		return os.Chmod(p, fileMode)
	}
	rel, err := f.relative(p)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(f.root, dirMode); err != nil {
		return fmt.Errorf("creating root: %w", err)
	}
	r, err := os.OpenRoot(f.root)
	if err != nil {
		return fmt.Errorf("opening root: %w", err)
	}
	defer r.Close()
	if err := r.MkdirAll(filepath.Dir(rel), dirMode); err != nil {
		return fmt.Errorf("creating the directory of %q under root %q: %w", p, f.root, err)
	}
	if err := r.WriteFile(rel, data, fileMode); err != nil {
		return fmt.Errorf("writing %q under root %q: %w", p, f.root, err)
	}
	if err := r.Chmod(rel, fileMode); err != nil {
		return fmt.Errorf("setting the mode of %q under root %q: %w", p, f.root, err)
	}
	return nil
}

// Remove deletes p; a file that is already gone is not an error.
func (f *files) Remove(p string) error {
	if f.root == "" {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	rel, err := f.relative(p)
	if err != nil {
		return err
	}
	r, err := os.OpenRoot(f.root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("opening root: %w", err)
	}
	defer r.Close()
	if err := r.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing %q under root %q: %w", p, f.root, err)
	}
	return nil
}

// checksum is the hex SHA-256 of data, the value of the sha256 attribute.
func checksum(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
