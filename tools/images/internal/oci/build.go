package oci

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// OCI annotation keys the images carry as labels.
const (
	LabelSource   = "org.opencontainers.image.source"
	LabelRevision = "org.opencontainers.image.revision"
	LabelVersion  = "org.opencontainers.image.version"
	LabelTitle    = "org.opencontainers.image.title"
	LabelCreated  = "org.opencontainers.image.created"
)

// ErrInvalidSpec is wrapped by every error Build returns for a bad Spec.
var ErrInvalidSpec = errors.New("invalid image spec")

// Spec describes one image.
type Spec struct {
	// Ref names the image, with its tag: ghcr.io/magos-dev/magos-pause:0.1.0.
	Ref string
	// Files are the image's own files (its static binaries), one layer above the base layer.
	Files []Entry
	// Entrypoint is the command the container runs; its first element must be one of Files.
	Entrypoint []string
	// Cmd are the default arguments.
	Cmd []string
	// Env is the container's environment, KEY=value.
	Env []string
	// Source, Revision and Version are the OCI source, revision and version labels.
	Source, Revision, Version string
	// Labels are further labels; they may not override the ones above.
	Labels map[string]string
	// Created is the image's creation time, also every file's modification
	// time; a fixed value (the commit time, or the Unix epoch) keeps the
	// digest a function of the inputs.
	Created time.Time
	// OS and Architecture of the binaries (linux/amd64 when empty).
	OS, Architecture string
}

// Tag parses s.Ref; the tag must be explicit.
func (s Spec) Tag() (name.Tag, error) {
	t, err := name.NewTag(s.Ref, name.StrictValidation)
	if err != nil {
		return name.Tag{}, fmt.Errorf("%w: image reference %q: %w", ErrInvalidSpec, s.Ref, err)
	}
	return t, nil
}

func (s Spec) validate() error {
	var errs []error
	if _, err := s.Tag(); err != nil {
		errs = append(errs, err)
	}
	for k, v := range map[string]string{"source": s.Source, "revision": s.Revision, "version": s.Version} {
		if v == "" {
			errs = append(errs, fmt.Errorf("%w: the %s label is empty", ErrInvalidSpec, k))
		}
	}
	if len(s.Entrypoint) == 0 {
		errs = append(errs, fmt.Errorf("%w: no entrypoint", ErrInvalidSpec))
	} else if !slices.ContainsFunc(s.Files, func(e Entry) bool { return !e.Dir && path.Clean(e.Path) == s.Entrypoint[0] }) {
		errs = append(errs, fmt.Errorf("%w: the entrypoint %s is not one of the image's files", ErrInvalidSpec, s.Entrypoint[0]))
	}
	errs = append(errs, checkLinked(s.Files)...)
	for _, k := range []string{LabelSource, LabelRevision, LabelVersion, LabelTitle, LabelCreated} {
		if _, ok := s.Labels[k]; ok {
			errs = append(errs, fmt.Errorf("%w: label %s is set from the spec's own fields", ErrInvalidSpec, k))
		}
	}
	return errors.Join(errs...)
}

// labels are the image config's labels: the OCI ones and s.Labels.
func (s Spec) labels(t name.Tag) map[string]string {
	l := maps.Clone(s.Labels)
	if l == nil {
		l = map[string]string{}
	}
	l[LabelSource] = s.Source
	l[LabelRevision] = s.Revision
	l[LabelVersion] = s.Version
	l[LabelTitle] = path.Base(t.RepositoryStr())
	l[LabelCreated] = s.Created.UTC().Format(time.RFC3339)
	return l
}

// Build assembles the image s describes: the base layer (baseEntries), a
// layer of s.Files, and a config that runs s.Entrypoint as user 65532.
func Build(s Spec) (v1.Image, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	t, _ := s.Tag()
	created := v1.Time{Time: s.Created.UTC()}

	base, err := newLayer(baseEntries(), created.Time)
	if err != nil {
		return nil, fmt.Errorf("base layer: %w", err)
	}
	files, err := newLayer(s.Files, created.Time)
	if err != nil {
		return nil, fmt.Errorf("files of %s: %w", s.Ref, err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, History: v1.History{Created: created, CreatedBy: "magos base: users root and nonroot (65532), CA certificates, /tmp"}},
		mutate.Addendum{Layer: files, History: v1.History{Created: created, CreatedBy: "magos files: " + filePaths(s.Files)}},
	)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created = created
	cf.OS, cf.Architecture = orString(s.OS, "linux"), orString(s.Architecture, "amd64")
	cf.Config = v1.Config{
		User:       strconv.Itoa(NonRootUID) + ":" + strconv.Itoa(NonRootUID),
		Entrypoint: s.Entrypoint,
		Cmd:        s.Cmd,
		Env:        s.Env,
		WorkingDir: "/",
		Labels:     s.labels(t),
	}
	return mutate.ConfigFile(img, cf)
}

// filePaths lists the entries' paths, sorted like the layer, so their
// order in the spec does not change the digest.
func filePaths(entries []Entry) string {
	paths := make([]string, len(entries))
	for i, e := range entries {
		paths[i] = path.Clean(e.Path)
	}
	slices.Sort(paths)
	return strings.Join(paths, " ")
}

func orString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
