package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/magos-dev/magos/tools/images/internal/oci"
)

// listFlag collects a repeated flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// build runs `magos-image build`.
func build(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		spec                oci.Spec
		out, entrypoint     string
		created             int64
		files, envs, labels listFlag
	)
	fs.StringVar(&spec.Ref, "ref", "", "image reference with tag, e.g. ghcr.io/magos-dev/magos-pause:0.1.0")
	fs.StringVar(&out, "out", "", "archive to write (an OCI image layout in a tar file)")
	fs.Var(&files, "file", "SRC=DST: put the local file SRC at DST in the image, executable (repeatable)")
	fs.StringVar(&entrypoint, "entrypoint", "", "the container's command, space-separated")
	fs.Var(&envs, "env", "KEY=value in the container's environment (repeatable)")
	fs.Var(&labels, "label", "KEY=value image label (repeatable)")
	fs.StringVar(&spec.Source, "source", "", "org.opencontainers.image.source")
	fs.StringVar(&spec.Revision, "revision", "", "org.opencontainers.image.revision (the commit)")
	fs.StringVar(&spec.Version, "version", "", "org.opencontainers.image.version")
	fs.Int64Var(&created, "created", 0, "creation time in Unix seconds (e.g. the commit time), also every file's mtime")
	fs.StringVar(&spec.Architecture, "arch", runtime.GOARCH, "architecture of the binaries")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if out == "" || fs.NArg() > 0 {
		return fmt.Errorf("need -out and no positional arguments")
	}
	spec.Created = time.Unix(created, 0).UTC()
	spec.Entrypoint = strings.Fields(entrypoint)
	spec.Env = envs
	spec.Labels = map[string]string{}
	for _, l := range labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return fmt.Errorf("-label %q: want KEY=value", l)
		}
		spec.Labels[k] = v
	}
	for _, f := range files {
		src, dst, ok := strings.Cut(f, "=")
		if !ok {
			return fmt.Errorf("-file %q: want SRC=DST", f)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		spec.Files = append(spec.Files, oci.Entry{Path: dst, Mode: 0o755, Data: data})
	}

	img, err := oci.Build(spec)
	if err != nil {
		return err
	}
	tag, _ := spec.Tag()
	if err := oci.WriteArchive(out, tag, img, spec.Created); err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fi, err := os.Stat(out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s  %s@%s  %.1f MiB\n", out, tag, digest, float64(fi.Size())/(1<<20))
	return nil
}
