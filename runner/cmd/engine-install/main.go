// Command engine-install is the entrypoint of a Magos engine image
// (magos-engine-<engine>:<version>). The runner Job's init container runs
// it with one argument, the directory the runner reads as its versions
// directory (an emptyDir), and it copies the engine binary the image holds
// to <dir>/<engine>/<version>/<binary>, the layout the runner resolves
// engines in. The image's entrypoint carries the flags:
//
//	/engine/install -engine=opentofu -version=1.10.6 -binary=/engine/tofu <versions-dir>
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("install", flag.ContinueOnError)
	fs.SetOutput(stderr)
	engine := fs.String("engine", "", "engine name: opentofu or terraform")
	version := fs.String("version", "", "engine version, e.g. 1.10.6")
	binary := fs.String("binary", "", "path of the engine binary in the image, e.g. /engine/tofu")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "install: want exactly one argument, the versions directory; got %q\n", fs.Args())
		return 2
	}
	dst, err := install(*engine, *version, *binary, fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "install: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "Installed %s %s at %s\n", *engine, *version, dst)
	return 0
}

// install copies binary to versionsDir/engine/version/<base name of
// binary>, executable and read-only, and returns the path it wrote. It
// writes a temporary file first and renames it, so the runner never sees
// half a binary.
func install(engine, version, binary, versionsDir string) (string, error) {
	for flagName, v := range map[string]string{"-engine": engine, "-version": version, "-binary": binary} {
		if v == "" {
			return "", fmt.Errorf("%s is empty", flagName)
		}
	}
	for flagName, v := range map[string]string{"-engine": engine, "-version": version} {
		if strings.ContainsAny(v, `/\`) || v == "." || v == ".." {
			return "", fmt.Errorf("%s %q: must be a single path element", flagName, v)
		}
	}
	src, err := os.Open(binary)
	if err != nil {
		return "", err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", binary)
	}
	dir := filepath.Join(versionsDir, engine, version)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	dst := filepath.Join(dir, filepath.Base(binary))
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(binary)+".*")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(tmp, src)
	err = errors.Join(err, tmp.Sync(), tmp.Chmod(0o555), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return "", fmt.Errorf("copying %s to %s: %w", binary, dst, err)
	}
	return dst, nil
}
