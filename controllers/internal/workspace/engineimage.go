package workspace

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// engineImagePattern is what an engine image (template) may look like; the
// CRDs validate spec.terraform.image with the same pattern.
var engineImagePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/:@-]*(\{version\}[A-Za-z0-9._/:@-]*)*$`)

// engineImageFlag collects repeated ENGINE=IMAGE flags: the engine image
// template of each engine. An empty IMAGE removes the engine's template.
type engineImageFlag map[magosv1.Engine]string

func (f engineImageFlag) String() string {
	var parts []string
	for _, e := range slices.Sorted(maps.Keys(f)) {
		parts = append(parts, string(e)+"="+f[e])
	}
	return strings.Join(parts, ",")
}

// Set adds or replaces one engine's image template.
func (f engineImageFlag) Set(v string) error {
	engine, image, ok := strings.Cut(v, "=")
	e := magosv1.Engine(engine)
	if !ok || (e != magosv1.EngineOpenTofu && e != magosv1.EngineTerraform) {
		return fmt.Errorf("want ENGINE=IMAGE with ENGINE opentofu or terraform, got %q", v)
	}
	if image == "" {
		delete(f, e)
		return nil
	}
	if !engineImagePattern.MatchString(image) {
		return fmt.Errorf("engine image %q is not an image reference (with an optional %s)", image, magosv1.EngineImageVersionPlaceholder)
	}
	f[e] = image
	return nil
}

// resolveEngineImage decides how the runner Pod gets the engine. The image
// comes from, in order: the Workspace's spec.terraform.image, its Project's
// defaults.terraform.image (both only for the engine they name), the
// controller's --engine-image template for the engine. With none of them, a
// runner image set on the Workspace or Project is taken to hold the engine
// (no init container, empty result); otherwise the Workspace stalls with
// EngineImageNotConfigured.
func (r *Reconciler) resolveEngineImage(s settings) (string, error) {
	image := s.SpecEngineImage
	if image == "" && s.RunnerImageSet {
		return "", nil
	}
	if image == "" {
		image = r.Options.EngineImages[s.Engine]
	}
	if image == "" {
		return "", rerror.Stall(magosv1.ReasonEngineImageNotConfigured, fmt.Errorf(
			"no engine image for %s %s: looked for spec.terraform.image, the Project's defaults.terraform.image (engine %s) and the controller's --engine-image=%s=<image>; "+
				"set one of them, or set runner.image to an image that holds the engine in %s/%s/%s",
			s.Engine, s.Version, s.Engine, s.Engine, r.Options.VersionsDir, s.Engine, s.Version))
	}
	return strings.ReplaceAll(image, magosv1.EngineImageVersionPlaceholder, s.Version), nil
}

// checkEngineImage applies the cluster's image allow-list to an engine image
// the Workspace or its Project chose: it runs in the runner Pod, so the
// guard on runner images covers it too. The controller's own templates are
// the admin's choice, like its default runner image.
func (g *Guards) checkEngineImage(s settings) error {
	if s.SpecEngineImage == "" || g.imageAllowed(s.EngineImage) {
		return nil
	}
	return rerror.Stall(magosv1.ReasonEngineImageNotAllowed, fmt.Errorf("engine image %q matches no pattern of the cluster's runner image allow-list", s.EngineImage))
}
