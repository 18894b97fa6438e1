package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// newWorkspaceSet creates a WorkspaceSet in the stack's namespace whose
// template reads GitRepository repo, suspended unless mutate says
// otherwise (the tests check what is generated, not what runs).
func (s *stack) newWorkspaceSet(name, repo string, mutate func(*magosv1.WorkspaceSet)) *magosv1.WorkspaceSet {
	s.t.Helper()
	set := &magosv1.WorkspaceSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns},
		Spec: magosv1.WorkspaceSetSpec{Template: magosv1.WorkspaceTemplate{
			Spec: magosv1.WorkspaceSpec{SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: repo}, Suspend: true},
		}},
	}
	mutate(set)
	require.NoError(s.t, env.Client.Create(context.Background(), set))
	return set
}

// waitSet waits until the set satisfies ok.
func (s *stack) waitSet(name string, timeout time.Duration, what string, ok func(*magosv1.WorkspaceSet) bool) *magosv1.WorkspaceSet {
	s.t.Helper()
	set := &magosv1.WorkspaceSet{}
	require.Eventually(s.t, func() bool {
		return env.Client.Get(context.Background(), client.ObjectKey{Namespace: s.ns, Name: name}, set) == nil && ok(set)
	}, timeout, 100*time.Millisecond, "WorkspaceSet %s %s: %+v", name, what, set.Status)
	return set
}

// setGenerated: the set is Ready with n Workspaces.
func setGenerated(n int) func(*magosv1.WorkspaceSet) bool {
	return func(set *magosv1.WorkspaceSet) bool {
		return set.Status.ObservedGeneration == set.Generation && set.Status.Workspaces == int32(n) &&
			conditions.IsTrue(set, magosv1.ReadyCondition)
	}
}

// setStalled: the set is Stalled with reason.
func setStalled(reason string) func(*magosv1.WorkspaceSet) bool {
	return func(set *magosv1.WorkspaceSet) bool {
		c := conditions.Get(set, magosv1.StalledCondition)
		return set.Status.ObservedGeneration == set.Generation && c != nil && c.Status == metav1.ConditionTrue && c.Reason == reason
	}
}

// generated lists the Workspaces set owns, by name.
func (s *stack) generated(set string) map[string]*magosv1.Workspace {
	s.t.Helper()
	var list magosv1.WorkspaceList
	require.NoError(s.t, env.Client.List(context.Background(), &list, client.InNamespace(s.ns), client.MatchingLabels{magosv1.WorkspaceSetLabel: set}))
	out := map[string]*magosv1.Workspace{}
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out
}

func names(m map[string]*magosv1.Workspace) []string {
	var out []string
	for n := range m {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// TestWorkspaceSetGenerators: each generator, on the real apiserver. The
// directories of a monorepo artifact (envs/*) give one Workspace per
// environment with its path and an env label; a matrix of two lists gives
// every combination; a merge by key joins two lists; namespaces matching
// a selector give one Workspace per team, and a namespace labelled later
// adds one. Each Workspace is owned by its set and labelled with it.
func TestWorkspaceSetGenerators(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	s.gitRepository("mono", copyConfig(t, "monorepo"))

	s.newWorkspaceSet("envs", "mono", func(set *magosv1.WorkspaceSet) {
		set.Spec.Generators = []magosv1.WorkspaceSetGenerator{{Directories: &magosv1.DirectoriesGenerator{
			SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "mono"}, Include: []string{"envs/*", "modules/*"}, Exclude: []string{"modules/*"},
		}}}
		set.Spec.Template.Metadata = magosv1.WorkspaceTemplateMetadata{Name: "app-{{path.basename}}", Labels: map[string]string{"env": "{{ path.1 }}"}}
		set.Spec.Template.Spec.Path = "{{path}}"
	})
	set := s.waitSet("envs", time.Minute, "generates one Workspace per environment", setGenerated(2))
	assert.Equal(t, int32(2), set.Status.Elements)
	got := s.generated("envs")
	require.Equal(t, []string{"app-dev", "app-prod"}, names(got))
	assert.Equal(t, "envs/dev", got["app-dev"].Spec.Path)
	assert.Equal(t, "prod", got["app-prod"].Labels["env"])
	r := s.magos("get", "workspacesets")
	require.Equal(t, 0, r.code, "%s", r)
	assert.Regexp(t, `envs\s+2\s+2\s+\d+\s+Orphan\s+2 Workspaces generated from 2 elements`, r.stdout)
	ref := metav1.GetControllerOf(got["app-dev"])
	require.NotNil(t, ref, "owned by the set")
	assert.Equal(t, set.UID, ref.UID)

	s.newWorkspaceSet("grid", "mono", func(set *magosv1.WorkspaceSet) {
		set.Spec.Generators = []magosv1.WorkspaceSetGenerator{{Matrix: &magosv1.MatrixGenerator{Generators: []magosv1.WorkspaceSetBaseGenerator{
			{List: &magosv1.ListGenerator{Elements: []map[string]string{{"region": "eu"}, {"region": "us"}}}},
			{List: &magosv1.ListGenerator{Elements: []map[string]string{{"tier": "a"}, {"tier": "b"}}}},
		}}}}
		set.Spec.Template.Metadata = magosv1.WorkspaceTemplateMetadata{Name: "grid-{{region}}-{{tier}}", Labels: map[string]string{"region": "{{region}}"}}
		set.Spec.Template.Spec.Path = "envs/dev"
	})
	s.waitSet("grid", time.Minute, "generates the matrix", setGenerated(4))
	assert.Equal(t, []string{"grid-eu-a", "grid-eu-b", "grid-us-a", "grid-us-b"}, names(s.generated("grid")))

	s.newWorkspaceSet("sized", "mono", func(set *magosv1.WorkspaceSet) {
		set.Spec.Generators = []magosv1.WorkspaceSetGenerator{{Merge: &magosv1.MergeGenerator{MergeKeys: []string{"env"}, Generators: []magosv1.WorkspaceSetBaseGenerator{
			{List: &magosv1.ListGenerator{Elements: []map[string]string{{"env": "dev", "size": "small"}, {"env": "prod", "size": "small"}}}},
			{List: &magosv1.ListGenerator{Elements: []map[string]string{{"env": "prod", "size": "large"}, {"env": "qa", "size": "huge"}}}},
		}}}}
		set.Spec.Template.Metadata = magosv1.WorkspaceTemplateMetadata{Name: "sized-{{env}}", Annotations: map[string]string{"example.com/size": "{{size}}"}}
		set.Spec.Template.Spec.Path = "envs/{{env}}"
	})
	s.waitSet("sized", time.Minute, "merges", setGenerated(2))
	sized := s.generated("sized")
	require.Equal(t, []string{"sized-dev", "sized-prod"}, names(sized), "only the first generator's elements")
	assert.Equal(t, "small", sized["sized-dev"].Annotations["example.com/size"])
	assert.Equal(t, "large", sized["sized-prod"].Annotations["example.com/size"])

	team := "t" + rand.String(6)
	labelled := func(name string, granted bool) {
		labels := map[string]string{"magos-test-team": team}
		if granted {
			labels[magosv1.WorkspaceSetGrantLabelPrefix+s.ns] = "true"
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
		require.NoError(t, env.Client.Create(ctx, ns))
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), ns) })
	}
	label := func(name string) { labelled(name, true) }
	label(team + "-a")
	label(team + "-b")
	labelled(team+"-hidden", false)
	s.newWorkspaceSet("teams", "mono", func(set *magosv1.WorkspaceSet) {
		set.Spec.Generators = []magosv1.WorkspaceSetGenerator{{Namespaces: &magosv1.NamespacesGenerator{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"magos-test-team": team}}}}}
		set.Spec.Template.Metadata = magosv1.WorkspaceTemplateMetadata{Name: "infra-{{namespace}}"}
		set.Spec.Template.Spec.Path = "envs/dev"
		set.Spec.Template.Spec.Vars = []magosv1.Variable{{Name: "team", Value: ptrTo("{{namespace}}")}}
	})
	s.waitSet("teams", time.Minute, "one Workspace per team namespace", setGenerated(2))
	label(team + "-c")
	s.waitSet("teams", time.Minute, "adds the namespace labelled later", setGenerated(3))
	teams := s.generated("teams")
	require.Contains(t, teams, "infra-"+team+"-c")
	assert.NotContains(t, teams, "infra-"+team+"-hidden", "a namespace not granted to the set's is not revealed")
	assert.Equal(t, team+"-c", *teams["infra-"+team+"-c"].Spec.Vars[0].Value)
}

func ptrTo[T any](v T) *T { return &v }

// TestWorkspaceSetCreatesInBursts: a set of 60 elements creates its
// Workspaces in bursts (at most 25, at most one burst a second, so no
// second holds more than two bursts' creates), Reconciling with Generating
// until the last one exists: a large set does not flood the apiserver or
// the run queue.
func TestWorkspaceSetCreatesInBursts(t *testing.T) {
	env.Require(t)
	s := newStack(t)
	s.gitRepository("mono", copyConfig(t, "monorepo"))
	var els []map[string]string
	for i := range 60 {
		els = append(els, map[string]string{"n": fmt.Sprint(i)})
	}
	s.newWorkspaceSet("many", "mono", func(set *magosv1.WorkspaceSet) {
		set.Spec.Generators = []magosv1.WorkspaceSetGenerator{{List: &magosv1.ListGenerator{Elements: els}}}
		set.Spec.Template.Metadata = magosv1.WorkspaceTemplateMetadata{Name: "many-{{n}}"}
		set.Spec.Template.Spec.Path = "envs/dev"
	})
	var seen []int32
	s.waitSet("many", time.Minute, "generates all 60", func(set *magosv1.WorkspaceSet) bool {
		if c := conditions.Get(set, magosv1.ReconcilingCondition); c != nil && c.Reason == magosv1.ReasonGenerating {
			if n := set.Status.Workspaces; len(seen) == 0 || seen[len(seen)-1] != n {
				seen = append(seen, n)
			}
		}
		return setGenerated(60)(set)
	})
	require.NotEmpty(t, seen, "the set reported Generating while it created")
	perSecond := map[int64]int{}
	for _, ws := range s.generated("many") {
		perSecond[ws.CreationTimestamp.Unix()]++
	}
	assert.Greater(t, len(perSecond), 1, "three bursts a second apart span more than one second: %v", perSecond)
	for sec, n := range perSecond {
		assert.LessOrEqual(t, n, 50, "at most one burst of 25 starts in a second, so a second holds at most two bursts' creates (%d at %d)", n, sec)
	}
	assert.Len(t, s.generated("many"), 60)
}

// TestWorkspaceSetLifecycle: generated Workspaces are never destroyed by
// surprise. A manual edit of a field the template sets is put back and
// reported, an approval added by a person stays; an element that goes
// leaves its Workspace in place, unowned (Orphan), or deletes it
// (Delete); a generator error, a template naming a parameter no element
// has, or a name an unowned Workspace holds change nothing and stall the
// set with the reason; a deleted set with Orphan leaves its Workspaces.
func TestWorkspaceSetLifecycle(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	s.gitRepository("mono", copyConfig(t, "monorepo"))
	list := func(envs ...string) []magosv1.WorkspaceSetGenerator {
		var els []map[string]string
		for _, e := range envs {
			els = append(els, map[string]string{"env": e})
		}
		return []magosv1.WorkspaceSetGenerator{{List: &magosv1.ListGenerator{Elements: els}}}
	}
	s.newWorkspaceSet("life", "mono", func(set *magosv1.WorkspaceSet) {
		set.Spec.Generators = list("dev", "prod", "qa")
		set.Spec.Template.Metadata = magosv1.WorkspaceTemplateMetadata{Name: "life-{{env}}"}
		set.Spec.Template.Spec.Path = "envs/{{env}}"
	})
	s.waitSet("life", time.Minute, "generates", setGenerated(3))
	updateSet := func(mutate func(*magosv1.WorkspaceSet)) {
		set := &magosv1.WorkspaceSet{}
		require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "life"}, set))
		mutate(set)
		require.NoError(t, env.Client.Update(ctx, set))
	}

	// A manual edit is reverted; a person's approval stays.
	patchWorkspace(t, s.ns, "life-dev", func(ws *magosv1.Workspace) {
		ws.Spec.Path = "envs/prod"
		ws.Spec.ApprovedPlan = "p1"
	})
	require.Eventually(t, func() bool { return s.workspace("life-dev").Spec.Path == "envs/dev" }, 30*time.Second, 100*time.Millisecond,
		"the template's path is put back")
	assert.Equal(t, "p1", s.workspace("life-dev").Spec.ApprovedPlan, "a field the template does not set is left alone")
	requireEvent(t, s.ns, "life", magosv1.ReasonWorkspaceReverted)

	// Orphan: qa's Workspace stays, unowned.
	updateSet(func(set *magosv1.WorkspaceSet) { set.Spec.Generators = list("dev", "prod") })
	s.waitSet("life", time.Minute, "lets qa go", setGenerated(2))
	qa := s.workspace("life-qa")
	assert.Nil(t, metav1.GetControllerOf(qa), "no longer owned")
	assert.NotContains(t, qa.Labels, magosv1.WorkspaceSetLabel)
	requireEvent(t, s.ns, "life", magosv1.ReasonWorkspaceOrphaned)

	// Errors change nothing.
	before := names(s.generated("life"))
	updateSet(func(set *magosv1.WorkspaceSet) {
		set.Spec.Generators = []magosv1.WorkspaceSetGenerator{{Directories: &magosv1.DirectoriesGenerator{
			SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "missing"}, Include: []string{"envs/*"}}}}
	})
	set := s.waitSet("life", time.Minute, "stalls on the generator", setStalled(magosv1.ReasonGeneratorFailed))
	assert.Contains(t, conditions.Get(set, magosv1.StalledCondition).Message, "GitRepository "+s.ns+"/missing not found")
	assert.Equal(t, before, names(s.generated("life")), "nothing was deleted")
	updateSet(func(set *magosv1.WorkspaceSet) {
		set.Spec.Generators = list("dev", "prod")
		set.Spec.Template.Spec.Path = "envs/{{environment}}"
	})
	set = s.waitSet("life", time.Minute, "stalls on the template", setStalled(magosv1.ReasonInvalidTemplate))
	assert.Contains(t, conditions.Get(set, magosv1.StalledCondition).Message, "the template uses environment, which the element (env=dev) lacks")
	assert.Equal(t, "envs/dev", s.workspace("life-dev").Spec.Path, "nothing was changed")
	s.newWorkspace("life-staging", "mono", nil)
	updateSet(func(set *magosv1.WorkspaceSet) {
		set.Spec.Generators = list("dev", "prod", "staging")
		set.Spec.Template.Spec.Path = "envs/{{env}}"
	})
	set = s.waitSet("life", time.Minute, "stalls on a Workspace it does not own", setStalled(magosv1.ReasonWorkspaceConflict))
	assert.Contains(t, conditions.Get(set, magosv1.StalledCondition).Message, "workspaces life-staging exist and this set does not own them")

	// Delete: prod's Workspace is deleted.
	updateSet(func(set *magosv1.WorkspaceSet) {
		set.Spec.Generators = list("dev")
		set.Spec.DeletionPolicy = magosv1.DeletionDelete
	})
	s.waitSet("life", time.Minute, "deletes prod", setGenerated(1))
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "life-prod"}, &magosv1.Workspace{}))
	}, 30*time.Second, 100*time.Millisecond, "life-prod is deleted")
	requireEvent(t, s.ns, "life", magosv1.ReasonWorkspaceDeleted)

	// The set deleted with Orphan: dev's Workspace stays.
	updateSet(func(set *magosv1.WorkspaceSet) { set.Spec.DeletionPolicy = magosv1.DeletionOrphan })
	s.waitSet("life", time.Minute, "takes Orphan", func(set *magosv1.WorkspaceSet) bool { return set.Status.ObservedGeneration == set.Generation })
	require.NoError(t, env.Client.Delete(ctx, &magosv1.WorkspaceSet{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "life"}}))
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "life"}, &magosv1.WorkspaceSet{}))
	}, 30*time.Second, 100*time.Millisecond, "the set goes")
	require.Never(t, func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "life-dev"}, &magosv1.Workspace{}))
	}, 3*time.Second, 250*time.Millisecond, "its Workspace stays (no garbage collector runs here: it would if the owner reference were kept)")
	assert.Nil(t, metav1.GetControllerOf(s.workspace("life-dev")), "and is no longer owned, so a garbage collector leaves it")
}

// TestWorkspaceSetFeedsARollout: a set's Workspaces, labelled from their
// elements, are a Rollout's stages: a revision is applied in dev, waits
// for prod's promotion, and is applied in prod once promoted; the next
// revision goes the same way.
func TestWorkspaceSetFeedsARollout(t *testing.T) {
	f := newRolloutFixture(t, 0, []magosv1.Stage{
		{Name: "dev", Selector: envSelector("dev")},
		{Name: "prod", Selector: envSelector("prod"), Promotion: magosv1.PromotionManual},
	}, nil)
	rev := f.commit("v1")
	f.newWorkspaceSet("envs", "infra", func(set *magosv1.WorkspaceSet) {
		set.Spec.Generators = []magosv1.WorkspaceSetGenerator{{List: &magosv1.ListGenerator{Elements: []map[string]string{{"env": "dev"}, {"env": "prod"}}}}}
		set.Spec.Template.Metadata = magosv1.WorkspaceTemplateMetadata{Name: "app-{{env}}", Labels: map[string]string{"env": "{{env}}"}}
		set.Spec.Template.Spec.Suspend = false
		set.Spec.Template.Spec.ProjectRef = &magosv1.LocalObjectReference{Name: "app"}
		set.Spec.Template.Spec.Vars = []magosv1.Variable{{Name: "stage", Value: ptrTo("{{env}}")}}
	})
	f.waitRollout(time.Minute, "puts the generated Workspaces in their stages", func(ro *magosv1.Rollout) bool {
		dev, prod := stageOf(ro, "dev"), stageOf(ro, "prod")
		return dev != nil && prod != nil && len(dev.Workspaces) == 1 && dev.Workspaces[0].Name == "app-dev" &&
			len(prod.Workspaces) == 1 && prod.Workspaces[0].Name == "app-prod"
	})
	for i, r := range []string{rev, ""} {
		if i > 0 {
			r = f.commit("v2")
		}
		f.waitWorkspace("app-dev", 3*time.Minute, "applies "+r, appliedRevision(r))
		f.waitWorkspace("app-prod", 3*time.Minute, "waits for prod's promotion of "+r, func(ws *magosv1.Workspace) bool {
			return ws.Status.Phase == magosv1.PhaseAwaitingPromotion && ws.Status.Plan != nil && ws.Status.Plan.Revision == r
		})
		f.promote("prod", r)
		f.waitWorkspace("app-prod", 3*time.Minute, "applies "+r+" once promoted", appliedRevision(r))
	}
}

// TestWorkspaceSetDeletionKeepsOrDestroys: with applied Workspaces, an
// element removed under Orphan keeps its Workspace and its state; under
// Delete, a Workspace with destroyOnDelete runs its own destroy before it
// goes (Destroyed).
func TestWorkspaceSetDeletionKeepsOrDestroys(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspaceSet("apps", "infra", func(set *magosv1.WorkspaceSet) {
		set.Spec.Generators = []magosv1.WorkspaceSetGenerator{{List: &magosv1.ListGenerator{Elements: []map[string]string{{"app": "kept"}, {"app": "gone"}, {"app": "stays"}}}}}
		set.Spec.Template.Metadata = magosv1.WorkspaceTemplateMetadata{Name: "app-{{app}}"}
		set.Spec.Template.Spec.Suspend = false
		set.Spec.Template.Spec.DestroyOnDelete = true
		set.Spec.Template.Spec.Vars = []magosv1.Variable{{Name: "greeting", Value: ptrTo("hello {{app}}")}}
	})
	for _, name := range []string{"app-kept", "app-gone", "app-stays"} {
		s.waitWorkspace(name, 3*time.Minute, "applies", appliedRevision(rev))
	}
	state := func(name string) bool {
		var sec corev1.Secret
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "tfstate-default-" + name}, &sec)
		return err == nil && len(sec.Data) > 0
	}
	require.True(t, state("app-kept"))

	update := func(mutate func(*magosv1.WorkspaceSet)) {
		set := &magosv1.WorkspaceSet{}
		require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "apps"}, set))
		mutate(set)
		require.NoError(t, env.Client.Update(ctx, set))
	}
	update(func(set *magosv1.WorkspaceSet) {
		set.Spec.Generators[0].List.Elements = []map[string]string{{"app": "gone"}, {"app": "stays"}}
	})
	s.waitSet("apps", time.Minute, "orphans app-kept", setGenerated(2))
	kept := s.workspace("app-kept")
	assert.Nil(t, metav1.GetControllerOf(kept))
	assert.Equal(t, rev, kept.Status.LastApplied.Revision, "the orphaned Workspace stays applied")
	assert.True(t, state("app-kept"), "and keeps its state")

	update(func(set *magosv1.WorkspaceSet) {
		set.Spec.DeletionPolicy = magosv1.DeletionDelete
		set.Spec.Generators[0].List.Elements = []map[string]string{{"app": "stays"}}
	})
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "app-gone"}, &magosv1.Workspace{}))
	}, 3*time.Minute, 250*time.Millisecond, "app-gone is destroyed, then goes")
	requireEvent(t, s.ns, "app-gone", magosv1.ReasonDestroyed)
	assert.Equal(t, rev, s.workspace("app-stays").Status.LastApplied.Revision, "the remaining element is untouched")
}
