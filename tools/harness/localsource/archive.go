package localsource

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// entry is one file or directory of an artifact.
type entry struct {
	name string // slash-separated, relative, without a trailing slash
	dir  bool
	exec bool
	data []byte
}

// archive is an artifact's content before compression.
type archive struct {
	entries []entry
}

// epoch is every entry's modification time, so that equal content gives
// equal bytes.
var epoch = time.Unix(0, 0).UTC()

// tarball writes the entries, sorted, as a tar stream without ownership or
// times, and returns it gzip-compressed along with the sha1 of the
// uncompressed stream (the content's revision).
func (a *archive) tarball() (gz []byte, sum string, err error) {
	slices.SortFunc(a.entries, func(x, y entry) int { return strings.Compare(x.name, y.name) })
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	for _, e := range a.entries {
		hdr := &tar.Header{Name: e.name, Mode: 0o644, ModTime: epoch, Format: tar.FormatPAX, Typeflag: tar.TypeReg, Size: int64(len(e.data))}
		if e.exec {
			hdr.Mode = 0o755
		}
		if e.dir {
			hdr.Name, hdr.Mode, hdr.Typeflag, hdr.Size = e.name+"/", 0o755, tar.TypeDir, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, "", err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, "", err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, "", err
	}
	h := sha1.Sum(raw.Bytes())
	var out bytes.Buffer
	zw, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if err != nil {
		return nil, "", err
	}
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return nil, "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	return out.Bytes(), hex.EncodeToString(h[:]), nil
}

// readDir collects a directory's regular files and directories, skipping
// .git and anything else (symlinks, devices), as source-controller does.
func readDir(root string) (*archive, error) {
	a := &archive{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir() && d.Name() == ".git":
			return filepath.SkipDir
		case d.IsDir():
			a.entries = append(a.entries, entry{name: rel, dir: true})
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			a.entries = append(a.entries, entry{name: rel, exec: info.Mode()&0o111 != 0, data: data})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// readGit collects the tree of a commit of a local Git repository through
// `git archive`.
func readGit(repo, commit string) (*archive, error) {
	out, err := git(repo, "archive", "--format=tar", commit)
	if err != nil {
		return nil, err
	}
	a := &archive{}
	tr := tar.NewReader(bytes.NewReader(out))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return a, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading git archive: %w", err)
		}
		name := strings.TrimSuffix(path.Clean(hdr.Name), "/")
		switch hdr.Typeflag {
		case tar.TypeDir:
			a.entries = append(a.entries, entry{name: name, dir: true})
		case tar.TypeReg:
			data, err := io.ReadAll(tr)
			if err != nil {
				return nil, err
			}
			a.entries = append(a.entries, entry{name: name, exec: hdr.Mode&0o111 != 0, data: data})
		}
	}
}

// git runs a git command in repo and returns its standard output.
func git(repo string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// resolveGit returns the commit ref names in repo and the revision
// source-controller would give it: <branch or tag>@sha1:<commit>, or
// sha1:<commit> for a bare commit. An empty ref is HEAD, named after the
// checked-out branch (or defaultBranch when detached).
func resolveGit(repo, ref, defaultBranch string) (commit, revision string, err error) {
	name := ref
	if ref == "" {
		ref = "HEAD"
		name = defaultBranch
		if out, err := git(repo, "symbolic-ref", "--short", "-q", "HEAD"); err == nil {
			name = strings.TrimSpace(string(out))
		}
	}
	out, err := git(repo, "rev-parse", "--verify", ref+"^{commit}")
	if err != nil {
		return "", "", err
	}
	commit = strings.TrimSpace(string(out))
	if ref != "HEAD" && !isNamedRef(repo, ref) { // a bare commit
		return commit, "sha1:" + commit, nil
	}
	return commit, name + "@sha1:" + commit, nil
}

// isNamedRef reports whether ref is a branch or a tag of repo.
func isNamedRef(repo, ref string) bool {
	for _, full := range []string{"refs/heads/" + ref, "refs/tags/" + ref} {
		if _, err := git(repo, "show-ref", "--verify", "-q", full); err == nil {
			return true
		}
	}
	return false
}

// sha1Sum is the sha1 of data.
func sha1Sum(data []byte) []byte {
	h := sha1.Sum(data)
	return h[:]
}
