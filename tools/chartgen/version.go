package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

var (
	appVersionRe = regexp.MustCompile(`(?m)^appVersion: "([^"]+)"$`)
	// versionLine matches a chart's version and appVersion and the
	// versions of the umbrella chart's dependencies.
	versionLine = regexp.MustCompile(`(?m)^((?:    )?version: |appVersion: ")[^"\n]+`)
	// releaseRefs are the places outside the charts that name the release:
	// a runner image tag set in deploy/flux and its OCIRepository tags (the
	// charts' runner and engine images follow global.image).
	runnerTagRe = regexp.MustCompile(`(magos-runner:)[^\s"]+`)
	fluxTagRe   = regexp.MustCompile(`(?m)^(    tag: )\S+$`)
	// cliAPIsRe is the cli module's requirement of the apis module: the
	// release tags both at the same version (apis/vX.Y.Z, cli/vX.Y.Z).
	cliAPIsRe = regexp.MustCompile(`(?m)^(\tgithub\.com/magos-dev/magos/apis v)\S+`)
)

// stampVersion reads the release version (charts/magos/Chart.yaml's
// appVersion) and writes it into every chart's version and appVersion, the
// umbrella's dependency versions, deploy/flux and the cli module's
// requirement of the apis module.
func stampVersion(root string, subcharts []string) (string, error) {
	umbrella := filepath.Join(root, "charts", "magos", "Chart.yaml")
	data, err := os.ReadFile(umbrella)
	if err != nil {
		return "", err
	}
	m := appVersionRe.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("%s: no appVersion \"x.y.z\" line", umbrella)
	}
	version := string(m[1])
	files := map[string]*regexp.Regexp{
		umbrella: versionLine,
		filepath.Join(root, "charts", "magos-crds", "Chart.yaml"): versionLine,
		filepath.Join(root, "deploy", "flux", "magos.yaml"):       runnerTagRe,
		filepath.Join(root, "deploy", "flux", "source.yaml"):      fluxTagRe,
		filepath.Join(root, "cli", "go.mod"):                      cliAPIsRe,
	}
	for _, dir := range subcharts {
		files[filepath.Join(dir, "Chart.yaml")] = versionLine
	}
	for file, re := range files {
		if err := rewrite(file, re, version); err != nil {
			return "", err
		}
	}
	return version, nil
}

// rewrite replaces what follows the first group of every match of re in
// file with version.
func rewrite(file string, re *regexp.Regexp, version string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	out := re.ReplaceAll(data, []byte("${1}"+version))
	return os.WriteFile(file, out, 0o644)
}
