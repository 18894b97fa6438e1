package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// MakeVariable reads a simple `NAME := value` line of the repository's
// Makefile, where the versions of the tools tests run are pinned.
func MakeVariable(root, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` := (\S+)$`).FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("the Makefile sets no %s", name)
	}
	return string(m[1]), nil
}
