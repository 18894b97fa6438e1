package oci

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Annotations of the index entry that name the image. containerd's import
// reads AnnotationImageName (the full reference); OCI tools read
// AnnotationRefName (the tag).
const (
	AnnotationImageName = "io.containerd.image.name"
	AnnotationRefName   = "org.opencontainers.image.ref.name"
)

// ErrInvalidArchive is wrapped by every error ReadArchive returns for a
// file that is not an image archive written by WriteArchive.
var ErrInvalidArchive = errors.New("invalid image archive")

// WriteArchive writes img as an OCI image layout in one tar file at file
// (through a temporary file, so a reader never sees half of it): oci-layout,
// index.json naming the image tag, and the blobs. Every tar header has the
// modification time mtime, so the file's bytes depend only on the image.
func WriteArchive(file string, tag name.Tag, img v1.Image, mtime time.Time) (err error) {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := writeArchive(tmp, tag, img, mtime.UTC()); err != nil {
		return fmt.Errorf("writing %s: %w", file, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

func writeArchive(w io.Writer, tag name.Tag, img v1.Image, mtime time.Time) error {
	manifest, err := img.RawManifest()
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	mt, err := img.MediaType()
	if err != nil {
		return err
	}
	index, err := json.Marshal(v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType: mt,
			Size:      int64(len(manifest)),
			Digest:    digest,
			Annotations: map[string]string{
				AnnotationImageName: tag.Name(),
				AnnotationRefName:   tag.TagStr(),
			},
		}},
	})
	if err != nil {
		return err
	}
	config, err := img.RawConfigFile()
	if err != nil {
		return err
	}
	configDigest, err := img.ConfigName()
	if err != nil {
		return err
	}

	tw := tar.NewWriter(w)
	add := func(name string, size int64, r io.Reader) error {
		h := &tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: size, ModTime: mtime, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := io.Copy(tw, r)
		return err
	}
	addBytes := func(name string, b []byte) error { return add(name, int64(len(b)), strings.NewReader(string(b))) }
	if err := addBytes("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	if err := addBytes("index.json", index); err != nil {
		return err
	}
	if err := addBytes(blobPath(digest), manifest); err != nil {
		return err
	}
	if err := addBytes(blobPath(configDigest), config); err != nil {
		return err
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return err
		}
		size, err := l.Size()
		if err != nil {
			return err
		}
		rc, err := l.Compressed()
		if err != nil {
			return err
		}
		err = add(blobPath(d), size, rc)
		_ = rc.Close()
		if err != nil {
			return fmt.Errorf("layer %s: %w", d, err)
		}
	}
	return tw.Close()
}

func blobPath(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }

// Archive is an image read back from a file WriteArchive wrote.
type Archive struct {
	// Tag is the reference the archive's index names.
	Tag   name.Tag
	Image v1.Image
	dir   string
}

// Close removes the unpacked layout.
func (a *Archive) Close() error { return os.RemoveAll(a.dir) }

// ReadArchive unpacks the image archive file into a temporary OCI layout
// and returns its one image and the tag its index names. Close the
// archive when done.
func ReadArchive(file string) (*Archive, error) {
	dir, err := os.MkdirTemp("", "magos-image-")
	if err != nil {
		return nil, err
	}
	a, err := readArchive(file, dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return a, nil
}

func readArchive(file, dir string) (*Archive, error) {
	if err := unpack(file, dir); err != nil {
		return nil, err
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidArchive, file, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidArchive, file, err)
	}
	if len(im.Manifests) != 1 {
		return nil, fmt.Errorf("%w: %s: the index lists %d manifests, want 1", ErrInvalidArchive, file, len(im.Manifests))
	}
	desc := im.Manifests[0]
	tag, err := name.NewTag(desc.Annotations[AnnotationImageName], name.StrictValidation)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: annotation %s: %w", ErrInvalidArchive, file, AnnotationImageName, err)
	}
	img, err := idx.Image(desc.Digest)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidArchive, file, err)
	}
	return &Archive{Tag: tag, Image: img, dir: dir}, nil
}

// unpack extracts the regular files of the tar file into dir; only the
// names an OCI layout has are accepted.
func unpack(file, dir string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrInvalidArchive, file, err)
		}
		if h.Typeflag != tar.TypeReg || !layoutName(h.Name) {
			return fmt.Errorf("%w: %s: unexpected entry %q", ErrInvalidArchive, file, h.Name)
		}
		dst := filepath.Join(dir, filepath.FromSlash(h.Name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		out, err := os.Create(dst)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, tr)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
}

// layoutName reports whether name is oci-layout, index.json or
// blobs/sha256/<64 hex digits>.
func layoutName(name string) bool {
	if name == "oci-layout" || name == "index.json" {
		return true
	}
	hex, ok := strings.CutPrefix(name, "blobs/sha256/")
	if !ok || len(hex) != 64 {
		return false
	}
	return strings.Trim(hex, "0123456789abcdef") == ""
}
