package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunnerImageAllowListPinsTagsAndDigests: an allow-list entry names a
// repository (a glob) with a tag pattern or an exact digest. An image
// matches a tag pattern only by its tag and without a digest (the digest
// is what the node pulls, whatever the tag says), and a digest only
// exactly; an image without a tag is :latest.
func TestRunnerImageAllowListPinsTagsAndDigests(t *testing.T) {
	d1, d2 := "sha256:"+strings.Repeat("1", 64), "sha256:"+strings.Repeat("2", 64)
	g := Guards{AllowedRunnerImages: []string{
		"ghcr.io/magos-dev/magos-runner:0.1.0",
		"ghcr.io/magos-dev/magos-engine-*:*",
		"registry.example/runner@" + d1,
		"registry.example/pinned:1.2.*",
	}}
	require.NoError(t, g.Validate("ghcr.io/magos-dev/magos-runner:0.1.0"))
	for image, want := range map[string]bool{
		"ghcr.io/magos-dev/magos-runner:0.1.0":                 true,
		"ghcr.io/magos-dev/magos-runner:0.0.9":                 false,
		"ghcr.io/magos-dev/magos-runner:0.1.0@" + d2:           false,
		"ghcr.io/magos-dev/magos-runner":                       false,
		"ghcr.io/magos-dev/magos-engine-opentofu:1.10.6":       true,
		"ghcr.io/magos-dev/magos-engine-opentofu:1.10.6@" + d2: false,
		"registry.example/runner@" + d1:                        true,
		"registry.example/runner:1.0@" + d1:                    true,
		"registry.example/runner@" + d2:                        false,
		"registry.example/runner:" + d1:                        false,
		"registry.example/pinned:1.2.3":                        true,
		"registry.example/pinned:1.2.3@" + d2:                  false,
		"registry.example/pinned:1.3.0":                        false,
		"registry.example/pinned":                              false,
		"registry.example/pinned-evil:1.2.3":                   false,
		"registry.example:5000/pinned:1.2.3":                   false,
	} {
		assert.Equal(t, want, g.CheckRunnerImage(image) == nil, image)
	}
}

// TestAllowListEntriesPinDigestsExactly: an entry's digest is exact; a
// digest pattern would admit every image of the repository, old runners
// included, and stops the controller at start.
func TestAllowListEntriesPinDigestsExactly(t *testing.T) {
	for _, entry := range []string{
		"registry.example/runner@sha256:*",
		"registry.example/runner@*",
		"registry.example/runner@sha256:0123abcd",
		"registry.example/runner:1@sha256:" + strings.Repeat("g", 64),
	} {
		g := Guards{AllowedRunnerImages: []string{entry, "registry.example/runner:1"}}
		assert.ErrorContains(t, g.Validate("registry.example/runner:1"), "pin a digest exactly", entry)
	}
}

func TestSplitImageReference(t *testing.T) {
	for ref, want := range map[string][3]string{
		"runner":                           {"runner", "", ""},
		"runner:1":                         {"runner", "1", ""},
		"registry:5000/runner":             {"registry:5000/runner", "", ""},
		"registry:5000/runner:1":           {"registry:5000/runner", "1", ""},
		"registry:5000/runner@sha256:ab":   {"registry:5000/runner", "", "sha256:ab"},
		"registry:5000/runner:1@sha256:ab": {"registry:5000/runner", "1", "sha256:ab"},
	} {
		name, tag, digest := splitImageReference(ref)
		assert.Equal(t, want, [3]string{name, tag, digest}, ref)
	}
}
