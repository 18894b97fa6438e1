package configtree

import (
	"net/url"
	"path"
	"regexp"
	"strings"
)

// sourceClass is what a module source means for the digest.
type sourceClass uint8

const (
	// sourceLocal is a directory of the same artifact.
	sourceLocal sourceClass = iota
	// sourcePinned is remote content fixed by the source itself: a
	// registry module at one exact version, or a Git commit.
	sourcePinned
	// sourceUnpinned is remote content that can change while the source
	// stays the same (a branch, a tag, a version range, an archive URL, a
	// path outside the artifact).
	sourceUnpinned
)

// Prefixes OpenTofu reads as a local module path (addrs.ParseModuleSource):
// backslashes are separators too.
var localSourcePrefixes = []string{"./", "../", `.\`, `..\`}

var (
	exactVersion = regexp.MustCompile(`^=?\s*v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
	commitID     = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)
	registryPart = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z_.-]*$`)
)

// classifySource says what a module source is and, for a local one, the
// path OpenTofu normalises it to (slash-separated, cleaned).
func classifySource(source, version string) (sourceClass, string) {
	for _, p := range localSourcePrefixes {
		if strings.HasPrefix(source, p) {
			return sourceLocal, path.Clean(strings.ReplaceAll(source, `\`, "/"))
		}
	}
	if isRegistrySource(source) {
		if exactVersion.MatchString(strings.TrimSpace(version)) {
			return sourcePinned, ""
		}
		return sourceUnpinned, ""
	}
	if gitCommitPinned(source) {
		return sourcePinned, ""
	}
	return sourceUnpinned, ""
}

// isRegistrySource says whether source is a module registry address:
// NAMESPACE/NAME/SYSTEM or HOST/NAMESPACE/NAME/SYSTEM, with an optional
// //subdirectory.
func isRegistrySource(source string) bool {
	if strings.Contains(source, "::") || strings.Contains(source, "?") || strings.Contains(source, "://") {
		return false
	}
	addr, _, _ := strings.Cut(source, "//")
	parts := strings.Split(addr, "/")
	if len(parts) != 3 && len(parts) != 4 {
		return false
	}
	if len(parts) == 4 && !strings.Contains(parts[0], ".") && !strings.Contains(parts[0], ":") {
		return false // a host names a domain (or host:port)
	}
	for _, p := range parts[len(parts)-3:] {
		if !registryPart.MatchString(p) {
			return false
		}
	}
	return !strings.HasSuffix(addr, ".git") && parts[0] != "github.com" && parts[0] != "bitbucket.org"
}

// gitCommitPinned says whether source is a Git source (forced with
// "git::", or one go-getter detects as Git: github.com/…, bitbucket.org/…,
// git@…) whose ref is a full commit ID.
func gitCommitPinned(source string) bool {
	s := strings.TrimPrefix(source, "git::")
	if s == source && !strings.HasPrefix(s, "github.com/") && !strings.HasPrefix(s, "bitbucket.org/") && !strings.HasPrefix(s, "git@") {
		return false
	}
	_, query, ok := strings.Cut(s, "?")
	if !ok {
		return false
	}
	q, err := url.ParseQuery(query)
	if err != nil || len(q["ref"]) != 1 {
		return false
	}
	return commitID.MatchString(q["ref"][0])
}
