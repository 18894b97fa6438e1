package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, file, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestStampVersion: the umbrella's appVersion reaches every chart, the
// dependency versions, deploy/flux and the cli module's requirement of
// apis; nothing else changes (the values'
// runner image follows global.image, "{tag}").
func TestStampVersion(t *testing.T) {
	root := t.TempDir()
	chart := func(name string) string {
		return "apiVersion: v2\nname: " + name + "\nversion: 0.1.0\nappVersion: \"0.1.0\"\nkubeVersion: \">=1.32.0-0\"\n"
	}
	writeFile(t, filepath.Join(root, "charts/magos/Chart.yaml"), strings.Replace(chart("magos"), `appVersion: "0.1.0"`, `appVersion: "1.2.3"`, 1)+
		"dependencies:\n  - name: workspace-controller\n    version: 0.1.0\n")
	writeFile(t, filepath.Join(root, "charts/magos-crds/Chart.yaml"), chart("magos-crds"))
	sub := filepath.Join(root, "charts/magos/charts/workspace-controller")
	writeFile(t, filepath.Join(sub, "Chart.yaml"), chart("workspace-controller"))
	writeFile(t, filepath.Join(sub, "values.yaml"), "runner:\n  image: \"{repository}/magos-runner:{tag}\"\n  defaultEngineVersion: 1.10.6\n")
	writeFile(t, filepath.Join(root, "deploy/flux/magos.yaml"), "        image: ghcr.io/magos-dev/magos-runner:0.1.0\n        defaultEngineVersion: 1.10.6\n")
	writeFile(t, filepath.Join(root, "deploy/flux/source.yaml"), "  ref:\n    tag: 0.1.0\n")
	writeFile(t, filepath.Join(root, "cli/go.mod"), "module github.com/magos-dev/magos/cli\n\nrequire (\n\tgithub.com/magos-dev/magos/apis v0.1.0\n\tgithub.com/spf13/cobra v1.10.2\n)\n")

	version, err := stampVersion(root, []string{sub})
	if err != nil {
		t.Fatal(err)
	}
	if version != "1.2.3" {
		t.Fatalf("version %q, want the umbrella's appVersion 1.2.3", version)
	}
	for file, want := range map[string]string{
		"charts/magos/Chart.yaml": "apiVersion: v2\nname: magos\nversion: 1.2.3\nappVersion: \"1.2.3\"\nkubeVersion: \">=1.32.0-0\"\n" +
			"dependencies:\n  - name: workspace-controller\n    version: 1.2.3\n",
		"charts/magos-crds/Chart.yaml":                         "apiVersion: v2\nname: magos-crds\nversion: 1.2.3\nappVersion: \"1.2.3\"\nkubeVersion: \">=1.32.0-0\"\n",
		"charts/magos/charts/workspace-controller/Chart.yaml":  "apiVersion: v2\nname: workspace-controller\nversion: 1.2.3\nappVersion: \"1.2.3\"\nkubeVersion: \">=1.32.0-0\"\n",
		"charts/magos/charts/workspace-controller/values.yaml": "runner:\n  image: \"{repository}/magos-runner:{tag}\"\n  defaultEngineVersion: 1.10.6\n",
		"deploy/flux/magos.yaml":                               "        image: ghcr.io/magos-dev/magos-runner:1.2.3\n        defaultEngineVersion: 1.10.6\n",
		"deploy/flux/source.yaml":                              "  ref:\n    tag: 1.2.3\n",
		"cli/go.mod":                                           "module github.com/magos-dev/magos/cli\n\nrequire (\n\tgithub.com/magos-dev/magos/apis v1.2.3\n\tgithub.com/spf13/cobra v1.10.2\n)\n",
	} {
		if got := readFile(t, filepath.Join(root, file)); got != want {
			t.Errorf("%s:\n%s\nwant:\n%s", file, got, want)
		}
	}
}

// TestValuesOf: leaves and commented maps in file order, with their
// defaults and comments.
func TestValuesOf(t *testing.T) {
	file := filepath.Join(t.TempDir(), "values.yaml")
	writeFile(t, file, `# Replicas of the controller;
# one leads.
replicas: 1
# Pod security.
securityContext:
  capabilities:
    drop: ["ALL"]
image:
  tag: "" # empty is appVersion
labels: {}
`)
	got, err := valuesOf(file)
	if err != nil {
		t.Fatal(err)
	}
	want := []value{
		{key: "replicas", def: "1", doc: "Replicas of the controller; one leads."},
		{key: "securityContext", doc: "Pod security."},
		{key: "securityContext.capabilities.drop", def: `["ALL"]`},
		{key: "image.tag", def: `""`, doc: "empty is appVersion"},
		{key: "labels", def: "{}"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("value %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestSharedValuesDefaults: keys every subchart has are shared, a default
// that differs is listed per subchart, and a subchart's own key is not.
func TestSharedValuesDefaults(t *testing.T) {
	perChart := map[string][]value{
		"a": {{key: "replicas", def: "1"}, {key: "memory", def: "256Mi"}},
		"b": {{key: "replicas", def: "1"}, {key: "memory", def: "512Mi"}, {key: "runner", def: "{}"}},
	}
	got := sharedValues([]string{"a", "b"}, perChart)
	want := []value{{key: "replicas", def: "`1`"}, {key: "memory", def: "`256Mi` (a); `512Mi` (b)"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}
