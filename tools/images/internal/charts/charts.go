// Package charts publishes Helm charts as OCI artifacts with the project's
// helm build (`helm package`, then `helm push oci://...`).
package charts

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Path is the path below a registry prefix where charts go: the chart
// <name> at version <v> is <registry>/charts/<name>:<v>.
const Path = "charts"

// Helm runs a helm binary.
type Helm struct {
	// Binary is the helm executable (the project builds it at bin/helm).
	Binary string
	// PlainHTTP talks to the registry over HTTP instead of HTTPS.
	PlainHTTP bool
	// RegistryConfig is the credentials file helm reads (the Docker config
	// format); empty uses helm's own default.
	RegistryConfig string
}

var (
	packagedRe = regexp.MustCompile(`(?m)saved it to: (\S+\.tgz)\s*$`)
	digestRe   = regexp.MustCompile(`(?m)^Digest: (sha256:[0-9a-f]{64})\s*$`)
	pushedRe   = regexp.MustCompile(`(?m)^Pushed: (\S+)\s*$`)
)

// Pushed is a chart in a registry.
type Pushed struct {
	// Ref is <registry>/charts/<name>:<version>.
	Ref string
	// Digest is the chart manifest's digest.
	Digest string
}

// Push pushes a chart to <registry>/charts: the chart in directory dir,
// packaged, or a chart already packaged (a .tgz, as a release holds).
func (h Helm) Push(ctx context.Context, dir, registry string) (Pushed, error) {
	pkg := dir
	if !strings.HasSuffix(dir, ".tgz") {
		tmp, err := os.MkdirTemp("", "magos-chart-")
		if err != nil {
			return Pushed{}, err
		}
		defer os.RemoveAll(tmp)
		if pkg, err = h.pack(ctx, dir, tmp); err != nil {
			return Pushed{}, err
		}
	}
	args := []string{"push", pkg, "oci://" + strings.TrimSuffix(strings.TrimPrefix(registry, "oci://"), "/") + "/" + Path}
	if h.PlainHTTP {
		args = append(args, "--plain-http")
	}
	if h.RegistryConfig != "" {
		args = append(args, "--registry-config", h.RegistryConfig)
	}
	out, err := h.run(ctx, args...)
	if err != nil {
		return Pushed{}, err
	}
	ref, digest := pushedRe.FindStringSubmatch(out), digestRe.FindStringSubmatch(out)
	if ref == nil || digest == nil {
		return Pushed{}, fmt.Errorf("helm push %s: no reference or digest in its output %q", pkg, out)
	}
	return Pushed{Ref: ref[1], Digest: digest[1]}, nil
}

// run runs helm with args and returns its combined output.
func (h Helm) run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, h.Binary, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("helm %s: %w: %s", strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
}

// pack packages the chart in dir into tmp and returns the package's path.
func (h Helm) pack(ctx context.Context, dir, tmp string) (string, error) {
	out, err := h.run(ctx, "package", dir, "--destination", tmp)
	if err != nil {
		return "", err
	}
	m := packagedRe.FindStringSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("helm package %s: no package path in its output %q", dir, out)
	}
	if pkg := m[1]; filepath.IsAbs(pkg) {
		return pkg, nil
	}
	return filepath.Join(tmp, filepath.Base(m[1])), nil
}
