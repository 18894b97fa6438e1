package statebackend

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// OverrideFile is the name of the file the runner writes into the
// configuration directory. An override file's backend block replaces the
// configuration's own backend or cloud block, or adds one where there is
// none (OpenTofu and Terraform merge `*_override.tf` files after the rest).
const OverrideFile = "zz_magos_backend_override.tf"

// httpBackendBlock points the engine at Server; the addresses and the
// password come from the TF_HTTP_* environment (see Server.Env), so that a
// saved plan, which records this block, applies in a run serving another
// port.
const httpBackendBlock = `# Written by the Magos runner: state is served by the runner itself.
terraform {
  backend "http" {}
}
`

// WriteHTTPOverride writes the override that selects the runner's server.
func WriteHTTPOverride(configDir string) error {
	return writeOverride(configDir, []byte(httpBackendBlock))
}

// writeOverride writes the override as a new regular file: whatever the
// artifact put at its name (a file, or a link that would carry the write
// to another file of the configuration) is removed first, and the file is
// created exclusively, so nothing is written through a link.
func writeOverride(configDir string, content []byte) error {
	name := filepath.Join(configDir, OverrideFile)
	if err := os.Remove(name); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("removing the artifact's %s: %w", OverrideFile, err)
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(content); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// WriteUserOverride writes the user's backend configuration file as the
// override. The file may hold a whole `terraform { backend "..." { ... } }`
// block or just the `backend "..." { ... }` block, which is then wrapped.
func WriteUserOverride(configDir, userFile string) error {
	b, err := os.ReadFile(userFile)
	if err != nil {
		return fmt.Errorf("reading the backend configuration: %w", err)
	}
	var out []byte
	switch firstWord(b) {
	case "terraform":
		out = b
	case "backend":
		out = append(append([]byte("terraform {\n"), b...), []byte("\n}\n")...)
	default:
		return fmt.Errorf("the backend configuration %s must hold a backend block (`backend \"TYPE\" { ... }`), optionally inside a terraform block", filepath.Base(userFile))
	}
	return writeOverride(configDir, out)
}

// firstWord returns the first identifier of an HCL file, skipping blank
// lines and comments.
func firstWord(b []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(b))
	inBlock := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if inBlock {
			if i := strings.Index(line, "*/"); i >= 0 {
				line, inBlock = strings.TrimSpace(line[i+2:]), false
			} else {
				continue
			}
		}
		if strings.HasPrefix(line, "/*") {
			if i := strings.Index(line, "*/"); i >= 0 {
				line = strings.TrimSpace(line[i+2:])
			} else {
				inBlock = true
				continue
			}
		}
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "//") {
			continue
		}
		end := strings.IndexFunc(line, func(r rune) bool { return r == ' ' || r == '\t' || r == '{' || r == '"' })
		if end < 0 {
			return line
		}
		return line[:end]
	}
	return ""
}

// UserBackendValues returns the string literals of the user's backend
// configuration file. The file comes from a Secret and its attributes hold
// credentials (access keys, tokens, passwords) next to plain settings; the
// runner masks them all.
func UserBackendValues(userFile string) ([]string, error) {
	b, err := os.ReadFile(userFile)
	if err != nil {
		return nil, fmt.Errorf("reading the backend configuration: %w", err)
	}
	return stringLiterals(b), nil
}

// stringLiterals returns the contents of the double-quoted strings in b
// that are values (after =, [, , or :), not block labels such as the
// backend type; \" and \\ are unescaped, comments skipped.
func stringLiterals(b []byte) []string {
	var out []string
	var last byte // the last character outside strings and blanks
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '#' || (b[i] == '/' && i+1 < len(b) && b[i+1] == '/'):
			for i < len(b) && b[i] != '\n' {
				i++
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			end := bytes.Index(b[i+2:], []byte("*/"))
			if end < 0 {
				return out
			}
			i += end + 3
		case b[i] == '"':
			var lit []byte
			for i++; i < len(b) && b[i] != '"' && b[i] != '\n'; i++ {
				if b[i] == '\\' && i+1 < len(b) {
					i++
				}
				lit = append(lit, b[i])
			}
			if strings.IndexByte("=[,:", last) >= 0 && last != 0 {
				out = append(out, string(lit))
			}
			last = '"'
		case b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r':
			last = b[i]
		}
	}
	return out
}
