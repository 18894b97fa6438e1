package config

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

// CheckEngineImage applies the cluster's image allow-list to an engine
// image the Workspace or its Project chose (chosen): it runs in the runner Pod, so the
// guard on runner images covers it too. The controller's own templates are
// the admin's choice, like its default runner image.
func (g *Guards) CheckEngineImage(image string, chosen bool) error {
	if !chosen || g.imageAllowed(image) {
		return nil
	}
	return rerror.Stall(magosv1.ReasonEngineImageNotAllowed, fmt.Errorf("engine image %q matches no pattern of the cluster's runner image allow-list", image))
}
