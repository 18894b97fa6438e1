package oci

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Destination is where an image tagged tag goes in registry (a host with
// an optional path prefix, e.g. registry.example.com/magos): the same
// image name and tag under that prefix, so
// ghcr.io/magos-dev/magos-runner:0.1.0 becomes
// registry.example.com/magos/magos-runner:0.1.0.
func Destination(registry string, tag name.Tag, opts ...name.Option) (name.Tag, error) {
	registry = strings.TrimSuffix(strings.TrimPrefix(registry, "oci://"), "/")
	if registry == "" {
		return name.Tag{}, fmt.Errorf("no registry given (REGISTRY=host[/prefix])")
	}
	ref := registry + "/" + path.Base(tag.RepositoryStr()) + ":" + tag.TagStr()
	dst, err := name.NewTag(ref, append([]name.Option{name.StrictValidation}, opts...)...)
	if err != nil {
		return name.Tag{}, fmt.Errorf("registry %q: %w", registry, err)
	}
	return dst, nil
}

// Push writes img to dst with the credentials of the default keychain
// (the Docker config file, as `docker login` and `helm registry login`
// write it) and returns the digest the registry stores it under.
func Push(ctx context.Context, dst name.Tag, img v1.Image) (v1.Hash, error) {
	if err := remote.Write(dst, img, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return v1.Hash{}, fmt.Errorf("pushing %s: %w", dst, err)
	}
	return img.Digest()
}
