// Command magos-image builds the Magos container images from static
// binaries and pushes them, and the Helm charts, to an OCI registry, with
// no container engine. `make images` and `make push` run it.
//
//	magos-image build -ref ghcr.io/magos-dev/magos-pause:0.1.0 -out bin/images/magos-pause.tar \
//	    -file bin/images/bin/pause=/pause -entrypoint /pause \
//	    -source https://github.com/magos-dev/magos -revision <commit> -version 0.1.0 -created <unix seconds>
//	magos-image push -registry registry.example.com/magos [-plain-http] [-helm bin/helm -chart charts/magos] bin/images/*.tar
//	magos-image sbom bin/release/0.1.0/images/*.tar
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `Usage: magos-image build|push|sbom [flags]

  build   assemble one image from files and write it as an OCI archive
  push    push image archives (and charts) to a registry
  sbom    write an SPDX document of each image archive's Go programs beside it

Run magos-image <command> -h for the command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "build":
		err = build(args[1:], stdout, stderr)
	case "push":
		err = push(ctx, args[1:], stdout, stderr)
	case "sbom":
		err = sbom(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "magos-image: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "magos-image %s: %v\n", args[0], err)
		return 1
	}
	return 0
}
