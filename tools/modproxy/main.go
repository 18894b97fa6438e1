// Command modproxy writes a module proxy (GOPROXY=file://DIR) that serves
// modules of this repository from the working tree exactly as a release's
// git tags would have a real proxy serve them: a module in a subdirectory
// of the repository gets version vX.Y.Z only from a tag <subdirectory>/vX.Y.Z
// (apis/v0.1.0 for the apis module), the root module only from a tag
// vX.Y.Z. A module no tag names is not served, so a release tagged only
// vX.Y.Z installs nothing. Each module's zip holds what a proxy's would:
// the module directory's files git tracks or would track (no ignored file,
// no nested module), plus the repository's LICENSE when the module has none.
//
// `make check-go-install` serves apis and cli under the release's tags and
// installs `github.com/magos-dev/magos/cli/kubectl-magos@vX.Y.Z` from it,
// with no go.work and no replace directive; `make tidy` records the sums
// of the apis module a tag would serve in cli/go.sum (-gosum).
//
//	modproxy [-out DIR] [-root REPO] -tag TAG... [-gosum FILE] MODULE_DIR...
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	out := flag.String("out", "", "the proxy's directory (written afresh); without it, a temporary one")
	root := flag.String("root", ".", "the repository root, where tags are taken from")
	gosum := flag.String("gosum", "", "a go.sum file to record the served modules' sums in (replacing their lines)")
	var tags []string
	flag.Func("tag", "a release tag, vX.Y.Z or <subdirectory>/vX.Y.Z (repeatable)", func(s string) error {
		tags = append(tags, s)
		return nil
	})
	flag.Parse()
	if len(tags) == 0 || flag.NArg() == 0 || (*out == "" && *gosum == "") {
		fmt.Fprintln(os.Stderr, "usage: modproxy [-out DIR] [-root REPO] -tag TAG... [-gosum FILE] MODULE_DIR...")
		os.Exit(2)
	}
	if err := run(*out, *root, *gosum, tags, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
}

func run(out, root, gosum string, tags, dirs []string) error {
	if out == "" {
		tmp, err := os.MkdirTemp("", "modproxy-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		out = tmp
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	modules, unused, err := resolve(root, dirs, tags)
	if err != nil {
		return err
	}
	for _, t := range unused {
		fmt.Fprintf(os.Stderr, "modproxy: tag %s names %s, not served here\n", t.Name, t.where())
	}
	var served []sum
	var errs []error
	for _, m := range modules {
		if len(m.Versions) == 0 {
			errs = append(errs, fmt.Errorf("%s (%s): no tag names it; a proxy would serve it only from a tag %s",
				m.Path, m.where(), tagName(m.Subdir, "vX.Y.Z")))
			continue
		}
		for _, v := range m.Versions {
			s, err := serve(out, root, m, v)
			if err != nil {
				return fmt.Errorf("%s@%s: %w", m.Path, v, err)
			}
			fmt.Fprintf(os.Stderr, "modproxy: %s@%s from tag %s\n", m.Path, v, tagName(m.Subdir, v))
			served = append(served, s)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if gosum != "" {
		return recordSums(gosum, served)
	}
	return nil
}

// tagName is the tag that versions the module in subdir.
func tagName(subdir, version string) string {
	if subdir == "" {
		return version
	}
	return subdir + "/" + version
}

func (t tag) where() string {
	if t.Subdir == "" {
		return "the module at the repository root"
	}
	return "the module in " + t.Subdir + "/"
}

func (m mod) where() string {
	if m.Subdir == "" {
		return "the repository root"
	}
	return strings.TrimSuffix(m.Subdir, "/") + "/"
}
