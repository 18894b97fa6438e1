package config

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// splitImageReference splits an image reference into its name (registry
// and repository), tag and digest, each "" where it has none. A colon is
// a tag's only after the last '/' (registry:5000/runner has no tag).
func splitImageReference(ref string) (name, tag, digest string) {
	name, digest, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
	}
	return name, tag, digest
}

// exactDigest is the only digest an allow-list entry may name.
var exactDigest = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// validImagePattern checks an allow-list entry: its name and tag patterns
// parse (path.Match) and its digest, if any, is exact. A digest pattern
// would admit every image of the repository, older runners included.
func validImagePattern(p string) error {
	name, tag, digest := splitImageReference(p)
	for _, glob := range []string{name, tag} {
		if _, err := path.Match(glob, ""); err != nil {
			return fmt.Errorf("%q is not a valid pattern: %w", p, err)
		}
	}
	if strings.Contains(p, "@") && !exactDigest.MatchString(digest) {
		return fmt.Errorf("%q: pin a digest exactly (sha256: and 64 hex digits), or name a tag pattern (repository:1.2.*)", p)
	}
	return nil
}

// imageMatches reports whether image is admitted by the allow-list entry
// pattern: its name matches the entry's (path.Match, where * does not
// cross '/'); then an entry with a digest admits exactly that digest (and
// the entry's tag pattern, if any, must match a tag the image names); an
// entry without one admits an image whose tag (latest where it names
// none) matches the entry's tag pattern (latest where it names none) and
// that names no digest, since the digest, not the tag, is what the node
// pulls.
func imageMatches(pattern, image string) bool {
	pn, pt, pd := splitImageReference(pattern)
	in, it, id := splitImageReference(image)
	if ok, _ := path.Match(pn, in); !ok {
		return false
	}
	if pd != "" {
		if id != pd {
			return false
		}
		if pt == "" {
			return true
		}
		ok, _ := path.Match(pt, it)
		return it != "" && ok
	}
	if id != "" {
		return false
	}
	if it == "" {
		it = "latest"
	}
	if pt == "" {
		pt = "latest"
	}
	ok, _ := path.Match(pt, it)
	return ok
}
