package setplan

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// fakeSources serves fixed directories and namespaces.
type fakeSources struct {
	dirs []string
	nss  []corev1.Namespace
	err  error
}

func (f fakeSources) Dirs(context.Context, string, magosv1.SourceReference) ([]string, error) {
	return f.dirs, f.err
}

func (f fakeSources) Namespaces(context.Context, *metav1.LabelSelector) ([]corev1.Namespace, error) {
	return f.nss, f.err
}

func list(els ...map[string]string) magosv1.WorkspaceSetBaseGenerator {
	return magosv1.WorkspaceSetBaseGenerator{List: &magosv1.ListGenerator{Elements: els}}
}

func setOf(gens ...magosv1.WorkspaceSetGenerator) *magosv1.WorkspaceSet {
	return &magosv1.WorkspaceSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns"}, Spec: magosv1.WorkspaceSetSpec{Generators: gens}}
}

func TestGenerate(t *testing.T) {
	src := fakeSources{
		dirs: []string{"envs", "envs/dev", "envs/dev/eu", "envs/prod", "envs/prod/eu", "envs/prod/us", "modules", "modules/net"},
		nss:  []corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"tier": "gold", magosv1.WorkspaceSetGrantLabelPrefix + "ns": "true"}}}},
	}
	dirs := &magosv1.DirectoriesGenerator{Include: []string{"envs/*/*"}, Exclude: []string{"envs/dev/*"}}
	for _, tt := range []struct {
		name string
		set  *magosv1.WorkspaceSet
		want []Element
	}{
		{"list", setOf(magosv1.WorkspaceSetGenerator{List: list(map[string]string{"env": "dev"}, map[string]string{"env": "prod"}).List}),
			[]Element{{"env": "dev"}, {"env": "prod"}}},
		{"directories, with excludes, sorted, with segments", setOf(magosv1.WorkspaceSetGenerator{Directories: dirs}),
			[]Element{
				{"path": "envs/prod/eu", "path.basename": "eu", "path.0": "envs", "path.1": "prod", "path.2": "eu"},
				{"path": "envs/prod/us", "path.basename": "us", "path.0": "envs", "path.1": "prod", "path.2": "us"},
			}},
		{"namespaces, with their labels", setOf(magosv1.WorkspaceSetGenerator{Namespaces: &magosv1.NamespacesGenerator{}}),
			[]Element{{"namespace": "team-a", "namespace.labels.tier": "gold"}}},
		{"matrix: every pair, the second's values win", setOf(magosv1.WorkspaceSetGenerator{Matrix: &magosv1.MatrixGenerator{Generators: []magosv1.WorkspaceSetBaseGenerator{
			list(map[string]string{"region": "eu", "x": "1"}, map[string]string{"region": "us", "x": "1"}),
			list(map[string]string{"tier": "a", "x": "2"}),
		}}}),
			[]Element{{"region": "eu", "tier": "a", "x": "2"}, {"region": "us", "tier": "a", "x": "2"}}},
		{"merge by key: the first's elements, joined", setOf(magosv1.WorkspaceSetGenerator{Merge: &magosv1.MergeGenerator{MergeKeys: []string{"env"}, Generators: []magosv1.WorkspaceSetBaseGenerator{
			list(map[string]string{"env": "dev", "size": "s"}, map[string]string{"env": "prod", "size": "s"}),
			list(map[string]string{"env": "prod", "size": "l"}, map[string]string{"env": "qa", "size": "xl"}),
		}}}),
			[]Element{{"env": "dev", "size": "s"}, {"env": "prod", "size": "l"}}},
		{"generators add up without duplicates", setOf(
			magosv1.WorkspaceSetGenerator{List: list(map[string]string{"env": "dev"}).List},
			magosv1.WorkspaceSetGenerator{List: list(map[string]string{"env": "dev"}, map[string]string{"env": "qa"}).List}),
			[]Element{{"env": "dev"}, {"env": "qa"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Generate(context.Background(), src, tt.set)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}

	_, err := Generate(context.Background(), fakeSources{err: errors.New("GitRepository ns/x not found")}, setOf(magosv1.WorkspaceSetGenerator{Directories: dirs}))
	var ge GenerateError
	require.ErrorAs(t, err, &ge)
	assert.EqualError(t, err, "spec.generators[0]: GitRepository ns/x not found")
	_, err = Generate(context.Background(), src, setOf(magosv1.WorkspaceSetGenerator{Directories: &magosv1.DirectoriesGenerator{Include: []string{"envs/["}}}))
	assert.ErrorContains(t, err, `glob "envs/[": syntax error`)
	_, err = Generate(context.Background(), src, setOf(magosv1.WorkspaceSetGenerator{Merge: &magosv1.MergeGenerator{MergeKeys: []string{"env"}, Generators: []magosv1.WorkspaceSetBaseGenerator{
		list(map[string]string{"region": "eu"}), list(map[string]string{"env": "dev"})}}}))
	assert.ErrorContains(t, err, "lacks a merge key (env)")
}

func TestRender(t *testing.T) {
	tpl := magosv1.WorkspaceTemplate{
		Metadata: magosv1.WorkspaceTemplateMetadata{Name: "app-{{env}}", Labels: map[string]string{"env": "{{ env }}", "{{kind}}": "yes"}},
		Spec:     magosv1.WorkspaceSpec{Path: "envs/{{env}}", Vars: []magosv1.Variable{{Name: "region", Value: ptr("{{region}}-{{env}}")}}},
	}
	got, err := render(tpl, Element{"env": "dev", "region": "eu", "kind": "web"})
	require.NoError(t, err)
	assert.Equal(t, "app-dev", got.Name)
	assert.Equal(t, map[string]string{"env": "dev", "web": "yes"}, got.Labels)
	assert.Equal(t, "envs/dev", got.Spec.Path)
	assert.Equal(t, "eu-dev", *got.Spec.Vars[0].Value)

	_, err = render(tpl, Element{"env": "dev"})
	assert.EqualError(t, err, "the template uses kind, region, which the element (env=dev) lacks")
	_, err = render(magosv1.WorkspaceTemplate{Metadata: magosv1.WorkspaceTemplateMetadata{Name: "App_{{env}}"}}, Element{"env": "dev"})
	assert.ErrorContains(t, err, `the rendered name "App_dev" is not a Workspace name`)
}

func ptr[T any](v T) *T { return &v }

func TestPlanChanges(t *testing.T) {
	r := func(name, path string) Rendered {
		return Rendered{Name: name, Labels: map[string]string{"env": name}, Spec: magosv1.WorkspaceSpec{Path: path}}
	}
	live := func(name, path string, mutate ...func(*magosv1.Workspace)) *magosv1.Workspace {
		ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"env": name, magosv1.WorkspaceSetLabel: "s"}},
			Spec: magosv1.WorkspaceSpec{Path: path}}
		for _, m := range mutate {
			m(ws)
		}
		return ws
	}
	c := Plan(
		[]Rendered{r("a", "envs/a"), r("b", "envs/b"), r("c", "envs/c"), r("taken", "x")},
		map[string]*magosv1.Workspace{
			"a":    live("a", "envs/a", func(ws *magosv1.Workspace) { ws.Spec.ApprovedPlan = "p1" }),
			"b":    live("b", "edited"),
			"gone": live("gone", "envs/gone"),
		},
		map[string]bool{"taken": true}, false)
	assert.Equal(t, []string{"c"}, namesOf(c.Create), "a missing Workspace is created")
	assert.Equal(t, []string{"b"}, namesOf(c.Revert), "an edited field the template sets is reverted; a field it leaves unset is not compared")
	assert.Equal(t, []string{"gone"}, c.Remove)
	assert.Equal(t, []string{"taken"}, c.Conflicts)

	var many []Rendered
	for i := range createBurst + 5 {
		many = append(many, r(fmt.Sprintf("w%d", i), "p"))
	}
	c = Plan(many, nil, nil, false)
	assert.Len(t, c.Create, createBurst, "creates are bounded per reconcile")
	assert.Equal(t, 5, c.Deferred)
	assert.Equal(t, []string{"dup"}, duplicateNames([]Rendered{r("dup", ""), r("x", ""), r("dup", "")}))
}

func namesOf(rs []Rendered) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}

func TestComputeStatus(t *testing.T) {
	set := &magosv1.WorkspaceSet{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
	ComputeStatus(set, Observation{Elements: 30, Owned: 25, Deferred: 5}, nil)
	assert.Equal(t, magosv1.ReasonGenerating, conditionReason(set, magosv1.ReconcilingCondition))
	ComputeStatus(set, Observation{Elements: 30, Owned: 30, Ready: 12}, nil)
	assert.Equal(t, magosv1.ReasonGenerated, conditionReason(set, magosv1.ReadyCondition))
	assert.Equal(t, int32(12), set.Status.Ready)
	assert.Equal(t, int64(3), set.Status.ObservedGeneration)
}

func conditionReason(set *magosv1.WorkspaceSet, t string) string {
	for _, c := range set.Status.Conditions {
		if c.Type == t {
			return c.Reason
		}
	}
	return ""
}
