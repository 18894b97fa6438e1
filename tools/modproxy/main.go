// Command modproxy writes a module proxy (GOPROXY=file://DIR) that serves
// modules of this repository at one version from the working tree, as
// tags would on a real release: `make check-go-install` runs
// `go install github.com/magos-dev/magos/cli/kubectl-magos@<version>`
// against it, with no go.work and no replace directive.
//
//	modproxy -out DIR -version vX.Y.Z MODULE_DIR...
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

func main() {
	out := flag.String("out", "", "the proxy's directory (written afresh)")
	version := flag.String("version", "", "the version every module is served at (vX.Y.Z)")
	flag.Parse()
	if *out == "" || *version == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: modproxy -out DIR -version vX.Y.Z MODULE_DIR...")
		os.Exit(2)
	}
	if err := os.RemoveAll(*out); err != nil {
		fail(err)
	}
	for _, dir := range flag.Args() {
		if err := serve(*out, dir, *version); err != nil {
			fail(fmt.Errorf("%s: %w", dir, err))
		}
	}
}

// serve writes the module in dir at version into the proxy at out: its
// list, info, go.mod and zip, as GOPROXY's protocol names them.
func serve(out, dir, version string) error {
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return err
	}
	mf, err := modfile.ParseLax("go.mod", gomod, nil)
	if err != nil {
		return err
	}
	mv := module.Version{Path: mf.Module.Mod.Path, Version: version}
	escaped, err := module.EscapePath(mv.Path)
	if err != nil {
		return err
	}
	at := filepath.Join(out, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return err
	}
	z, err := os.Create(filepath.Join(at, version+".zip"))
	if err != nil {
		return err
	}
	if err := zip.CreateFromDir(z, mv, dir); err != nil {
		z.Close()
		return err
	}
	return errors.Join(z.Close(),
		os.WriteFile(filepath.Join(at, "list"), []byte(version+"\n"), 0o644),
		os.WriteFile(filepath.Join(at, version+".info"), info, 0o644),
		os.WriteFile(filepath.Join(at, version+".mod"), gomod, 0o644))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "modproxy:", err)
	os.Exit(1)
}
