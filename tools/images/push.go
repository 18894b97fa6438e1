package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/magos-dev/magos/tools/images/internal/charts"
	"github.com/magos-dev/magos/tools/images/internal/oci"
)

// push runs `magos-image push`.
func push(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("push", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		registry string
		helm     charts.Helm
		chartDir listFlag
	)
	fs.StringVar(&registry, "registry", "", "host[/prefix] to push to; an image <any>/<name>:<tag> goes to <registry>/<name>:<tag>")
	fs.BoolVar(&helm.PlainHTTP, "plain-http", false, "talk to the registry over HTTP (a local test registry)")
	fs.StringVar(&helm.Binary, "helm", "", "helm binary that packages and pushes the -chart directories")
	fs.Var(&chartDir, "chart", "chart directory or packaged chart (.tgz) to push to <registry>/"+charts.Path+"/<chart>:<version> (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if registry == "" {
		return fmt.Errorf("need -registry host[/prefix]")
	}
	// One credentials file for images and charts.
	helm.RegistryConfig = dockerConfig()
	if len(chartDir) > 0 && helm.Binary == "" {
		return fmt.Errorf("-chart needs -helm")
	}
	var opts []name.Option
	if helm.PlainHTTP {
		opts = append(opts, name.Insecure)
	}
	for _, file := range fs.Args() {
		if err := pushArchive(ctx, file, registry, opts, stdout); err != nil {
			return err
		}
	}
	for _, dir := range chartDir {
		p, err := helm.Push(ctx, dir, registry)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s  %s@%s\n", dir, p.Ref, p.Digest)
	}
	return nil
}

func pushArchive(ctx context.Context, file, registry string, opts []name.Option, stdout io.Writer) error {
	a, err := oci.ReadArchive(file)
	if err != nil {
		return err
	}
	defer a.Close()
	dst, err := oci.Destination(registry, a.Tag, opts...)
	if err != nil {
		return err
	}
	digest, err := oci.Push(ctx, dst, a.Image)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s  %s@%s\n", file, dst, digest)
	return nil
}

// dockerConfig is the Docker config file go-containerregistry's default
// keychain reads the image registry's credentials from ($DOCKER_CONFIG or
// ~/.docker); `helm registry login --registry-config <it>` writes it.
func dockerConfig() string {
	if dir := os.Getenv("DOCKER_CONFIG"); dir != "" {
		return filepath.Join(dir, "config.json")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".docker", "config.json")
}
