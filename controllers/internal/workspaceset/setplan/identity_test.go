package setplan

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// TestRenderRefusesHostileIdentityFields: parameters that come from a
// repository (directory names) flow into the Workspace's name, labels and
// annotations. An element whose rendered name, label key or value, or
// annotation key the API would not take, or that would set Magos's own or
// Kubernetes' labels, is refused with the reason, before anything is
// applied; names are never rewritten to fit (two directories would
// collide on one rewritten name).
func TestRenderRefusesHostileIdentityFields(t *testing.T) {
	tpl := magosv1.WorkspaceTemplate{
		Metadata: magosv1.WorkspaceTemplateMetadata{
			Name:        "app-{{id}}",
			Labels:      map[string]string{"dir": "{{path.basename}}", "{{key}}": "yes"},
			Annotations: map[string]string{"example.com/{{note}}": "{{path}}"},
		},
		Spec: magosv1.WorkspaceSpec{Path: "{{path}}"},
	}
	el := func(id, basename, key string) Element {
		return Element{"id": id, "path.basename": basename, "path": "envs/" + basename, "key": key, "note": "source"}
	}
	long := strings.Repeat("a", 300)
	withNote := func(e Element, note string) Element { e["note"] = note; return e }
	for _, tt := range []struct {
		name   string
		e      Element
		refuse string // "" when the element renders
	}{
		{"a plain directory", el("prod", "prod", "tier"), ""},
		{"dots inside a name and a label value", el("v1.2", "v1.2", "tier"), ""},
		{"a prefixed label key", el("prod", "prod", "example.com/tier"), ""},
		{"upper case in the name", el("Prod", "prod", "tier"), `the rendered name "app-Prod" is not a Workspace name`},
		{"a name of two dots in a row", el("a..b", "prod", "tier"), `the rendered name "app-a..b" is not a Workspace name`},
		{"a name starting with a dot", el(".hidden", "prod", "tier"), `is not a Workspace name`},
		{"a name of 300 characters", el(long, "prod", "tier"), `is not a Workspace name`},
		{"a label value the API refuses", el("prod", "Prod Env!", "tier"), `label dir: value "Prod Env!" is not a label value`},
		{"a label value of 300 characters", el("prod", long, "tier"), `label dir: value "aaaaaaaa`},
		{"a label value starting with a dot", el("prod", ".prod", "tier"), `is not a label value`},
		{"a label key the API refuses", el("prod", "prod", "a b"), `label key "a b" is not a label key`},
		{"Magos's own label", el("prod", "prod", magosv1.WorkspaceSetLabel), `label key "magos.dev/workspaceset" is Magos's own`},
		{"a label under magos.dev", el("prod", "prod", "rollouts.magos.dev/stage"), `is Magos's own`},
		{"a Kubernetes label", el("prod", "prod", "kubernetes.io/metadata.name"), `is Kubernetes' own`},
		{"a Kubernetes label under a subdomain", el("prod", "prod", "node-role.kubernetes.io/control-plane"), `is Kubernetes' own`},
		{"an annotation key the API refuses", withNote(el("prod", "prod", "tier"), "has space"), `annotation key "example.com/has space" is not an annotation key`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render(tpl, tt.e)
			if tt.refuse == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.refuse)
		})
	}
}

// TestHostileDirectoriesRefuseOnlyTheirElements: a directory whose name
// renders an identity the API would not take, or the name of another
// element's Workspace, stalls its own element (named in the refusal with
// the reason), not the set: the other elements render.
func TestHostileDirectoriesRefuseOnlyTheirElements(t *testing.T) {
	tpl := magosv1.WorkspaceTemplate{
		Metadata: magosv1.WorkspaceTemplateMetadata{Name: "app-{{path.basename}}", Labels: map[string]string{"env": "{{path.basename}}"}},
		Spec:     magosv1.WorkspaceSpec{Path: "{{path}}"},
	}
	dirs := []string{"envs/dev", "envs/prod", "envs/Prod", "other/prod", "envs/" + strings.Repeat("x", 300), "envs/a..b", "envs/qa\x1b[31m"}
	els, err := directoryElements(dirs, []string{"*/*"}, nil)
	require.NoError(t, err)
	ok, refused := RenderAll(tpl, els)
	var names []string
	for _, d := range ok {
		names = append(names, d.Name)
	}
	assert.Equal(t, []string{"app-dev"}, names, "only the element nothing is wrong with")
	require.Len(t, refused, 6)
	why := map[string]Refusal{}
	for _, r := range refused {
		path, _, _ := strings.Cut(r.Element, ", ")
		why[path] = r
	}
	assert.Contains(t, why[`path=envs/Prod`].Reason, `"app-Prod" is not a Workspace name`)
	assert.Contains(t, why[`path=envs/prod`].Reason, "more than one element renders the Workspace name app-prod")
	assert.Equal(t, "app-prod", why[`path=envs/prod`].Name, "a refused element's name, where it has one, keeps its Workspace")
	assert.Contains(t, why[`path=other/prod`].Reason, "more than one element renders the Workspace name app-prod")
	assert.Contains(t, why[`path=envs/a..b`].Reason, "is not a Workspace name")
	for _, r := range refused {
		assert.LessOrEqual(t, utf8.RuneCountInString(r.Element), 100, "a refusal quotes at most a bounded part of the element: %q", r.Element)
		assert.NotContains(t, r.Element+r.Reason, "\x1b", "control characters are quoted")
	}
}

// TestRefusedElementsHoldRemovals: while an element is refused, the set
// cannot tell which Workspace it would keep, so it removes none; it still
// creates and updates the others.
func TestRefusedElementsHoldRemovals(t *testing.T) {
	owned := map[string]*magosv1.Workspace{"app-prod": {}, "app-old": {}}
	desired := []Rendered{{Name: "app-dev"}}
	c := Plan(desired, owned, nil, false)
	assert.Equal(t, []string{"app-old", "app-prod"}, c.Remove)
	c = Plan(desired, owned, nil, true)
	assert.Empty(t, c.Remove, "nothing removed while an element is refused")
	assert.Len(t, c.Create, 1, "the others are created")
}

func TestReservedKeys(t *testing.T) {
	for key, owner := range map[string]string{
		"env": "", "example.com/env": "", "magos.dev.example.com/x": "", "notmagos.dev/x": "",
		"magos.dev/workspaceset": "Magos's", "magos.dev/unlock": "Magos's", "rollouts.magos.dev/x": "Magos's",
		"kubernetes.io/metadata.name": "Kubernetes'", "node-role.kubernetes.io/x": "Kubernetes'", "k8s.io/x": "Kubernetes'",
	} {
		assert.Equal(t, owner, reservedKey(key), key)
	}
	err := checkMetadata(magosv1.WorkspaceTemplateMetadata{Annotations: map[string]string{magosv1.UnlockAnnotation: "yes"}})
	assert.EqualError(t, err, `annotation key "magos.dev/unlock" is Magos's own: a template cannot set it`)
}

// TestRefusedErrorNamesTheElements: the stall names the refused elements
// (at most maxRefusalsShown) and says what the set did with the others.
func TestRefusedErrorNamesTheElements(t *testing.T) {
	one := []Refusal{{Element: "env=Dev", Reason: "bad name"}}
	assert.EqualError(t, RefusedError(one, 0), "spec.template: every element is refused; nothing was changed: element (env=Dev): bad name")
	assert.EqualError(t, RefusedError(one, 2),
		"spec.template: 1 of 3 elements are refused; the other 2 are applied, and no Workspace is removed until every element renders: element (env=Dev): bad name")
	var many []Refusal
	for range maxRefusalsShown + 3 {
		many = append(many, Refusal{Element: "e", Reason: "r"})
	}
	assert.True(t, strings.HasSuffix(RefusedError(many, 1).Error(), "element (e): r; and 3 more"))
}

// TestStatusOfRefusedElements: a set with refused elements is Stalled
// (InvalidTemplate) and counts what it applied.
func TestStatusOfRefusedElements(t *testing.T) {
	set := &magosv1.WorkspaceSet{}
	set.Status.Elements, set.Status.Workspaces = 1, 1
	ComputeStatus(set, Observation{Elements: 4, Owned: 3, Ready: 2, Refused: 1},
		rerror.Stall(magosv1.ReasonInvalidTemplate, RefusedError([]Refusal{{Element: "path=envs/Prod", Reason: "bad"}}, 3)))
	assert.Equal(t, magosv1.ReasonInvalidTemplate, conditionReason(set, magosv1.StalledCondition))
	assert.Equal(t, [3]int32{4, 3, 2}, [3]int32{set.Status.Elements, set.Status.Workspaces, set.Status.Ready})
}
