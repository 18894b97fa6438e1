package artifactdigest

import (
	"fmt"
	"path"
	"strings"
)

// CleanEntryName checks the name of an artifact's tar entry and returns it
// cleaned: relative, without any ".." element, NUL or backslash. The
// runner extracts only such names, and the controllers read an artifact as
// the runner extracts it, so both take them from here.
func CleanEntryName(name string) (string, error) {
	if name == "" || strings.ContainsAny(name, "\\\x00") {
		return "", fmt.Errorf("entry name %q is invalid", name)
	}
	if strings.HasPrefix(name, "/") {
		return "", fmt.Errorf("entry %q has an absolute path", name)
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "", fmt.Errorf("entry %q leaves the root with '..'", name)
		}
	}
	return path.Clean(name), nil
}
