package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
)

// stalledWith is a wait condition: the Workspace is Stalled with reason.
func stalledWith(reason string) func(*magosv1.Workspace) bool {
	return func(ws *magosv1.Workspace) bool {
		c := conditions.Get(ws, magosv1.StalledCondition)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == reason
	}
}

// requireRefused waits until Workspace name is Stalled with reason, checks
// the message names what was refused and that no run ever starts.
func (s *stack) requireRefused(name, reason, msgPart string) {
	s.t.Helper()
	ws := s.waitWorkspace(name, time.Minute, "is refused with "+reason, stalledWith(reason))
	assert.Contains(s.t, conditions.Get(ws, magosv1.StalledCondition).Message, msgPart)
	assert.Equal(s.t, magosv1.PhaseFailed, ws.Status.Phase)
	require.Never(s.t, func() bool {
		var jobs batchv1.JobList
		require.NoError(s.t, env.Client.List(context.Background(), &jobs, client.InNamespace(s.ns), client.MatchingLabels{magosv1.WorkspaceLabel: name}))
		return len(jobs.Items) > 0
	}, 3*time.Second, 250*time.Millisecond, "a refused Workspace %s never runs", name)
}

// withProject makes a Workspace a member of Project name.
func withProject(name string) func(*magosv1.Workspace) {
	return func(ws *magosv1.Workspace) { ws.Spec.ProjectRef = &magosv1.LocalObjectReference{Name: name} }
}

func TestGuardCrossNamespaceSource(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	other := env.NewNamespace(t)

	t.Run("refused by default, even when the Project allows it", func(t *testing.T) {
		s := newStackWith(t, stackOptions{AlsoWatch: []string{other}})
		s.gitRepositoryIn(other, "shared", copyConfig(t, "hello"))
		require.NoError(t, env.Client.Create(ctx, &magosv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "open", Namespace: s.ns},
			Spec: magosv1.ProjectSpec{SourceAllowList: []magosv1.SourceRule{{Namespace: other}}}}))
		borrow := func(ws *magosv1.Workspace) { ws.Spec.SourceRef.Namespace = other }
		s.newWorkspace("borrower", "shared", borrow)
		s.newWorkspace("member", "shared", func(ws *magosv1.Workspace) { borrow(ws); withProject("open")(ws) })
		s.requireRefused("borrower", magosv1.ReasonCrossNamespaceSourceNotAllowed, other+"/shared")
		s.requireRefused("member", magosv1.ReasonCrossNamespaceSourceNotAllowed, "cross-namespace source references are not allowed")
	})

	t.Run("allowed when the operator allows cross-namespace references", func(t *testing.T) {
		s := newStackWith(t, stackOptions{AlsoWatch: []string{other},
			Workspace: func(o *config.Options) { o.Guards.NoCrossNamespaceRefs = false }})
		rev := s.gitRepositoryIn(other, "open-source", copyConfig(t, "hello"))
		s.newWorkspace("borrower", "open-source", func(ws *magosv1.Workspace) { ws.Spec.SourceRef.Namespace = other })
		s.waitWorkspace("borrower", 3*time.Minute, "applies", appliedRevision(rev))
	})
}

func TestGuardRequireProject(t *testing.T) {
	env.Require(t)
	tests := []struct {
		name           string
		guards         config.Guards
		namespaceLabel map[string]string
		refused        bool
	}{
		{name: "required everywhere", guards: config.Guards{RequireProject: true}, refused: true},
		{name: "required in a labelled namespace", guards: config.Guards{RequireProjectIn: labels.SelectorFromSet(labels.Set{"magos.dev/tenant": "a"})},
			namespaceLabel: map[string]string{"magos.dev/tenant": "a"}, refused: true},
		{name: "not required in another namespace", guards: config.Guards{RequireProjectIn: labels.SelectorFromSet(labels.Set{"magos.dev/tenant": "a"})},
			namespaceLabel: map[string]string{"magos.dev/tenant": "b"}, refused: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			s := newStackWith(t, stackOptions{NoControllers: true, Workspace: func(o *config.Options) { o.Guards = tt.guards }})
			var ns corev1.Namespace
			require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Name: s.ns}, &ns))
			ns.Labels = tt.namespaceLabel
			require.NoError(t, env.Client.Update(ctx, &ns))
			s.startController()

			// No source exists: a Workspace the guard lets through waits for it.
			s.newWorkspace("orphan", "nowhere", nil)
			if tt.refused {
				s.requireRefused("orphan", magosv1.ReasonProjectRequired, "spec.projectRef")
				return
			}
			s.waitWorkspace("orphan", time.Minute, "passes the guard and waits for its source", func(ws *magosv1.Workspace) bool {
				c := conditions.Get(ws, magosv1.ReadyCondition)
				return c != nil && c.Reason == magosv1.ReasonSourceNotReady
			})
		})
	}
}

func TestGuardRunnerImageAllowList(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStackWith(t, stackOptions{Workspace: func(o *config.Options) {
		o.Guards.AllowedRunnerImages = []string{"magos-runner:*", "registry.example/magos/runner@sha256:" + strings.Repeat("0", 64)}
	}})
	s.gitRepository("infra", copyConfig(t, "hello"))
	require.NoError(t, env.Client.Create(ctx, &magosv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "miners", Namespace: s.ns},
		Spec: magosv1.ProjectSpec{Defaults: &magosv1.ProjectDefaults{Runner: &magosv1.RunnerSpec{Image: "evil.example/miner:2"}}}}))

	s.newWorkspace("own-image", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.Runner = &magosv1.RunnerSpec{Image: "evil.example/miner:1"}
	})
	s.newWorkspace("project-image", "infra", withProject("miners"))
	s.newWorkspace("other-digest", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.Runner = &magosv1.RunnerSpec{Image: "magos-runner:v2@sha256:" + strings.Repeat("1", 64)}
	})
	s.newWorkspace("allowed-image", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.Runner = &magosv1.RunnerSpec{Image: "magos-runner:v2"}
	})
	s.requireRefused("own-image", magosv1.ReasonRunnerImageNotAllowed, `"evil.example/miner:1"`)
	s.requireRefused("project-image", magosv1.ReasonRunnerImageNotAllowed, `"evil.example/miner:2"`)
	s.requireRefused("other-digest", magosv1.ReasonRunnerImageNotAllowed, "magos-runner:v2@sha256:1111")
	require.Eventually(t, func() bool { return planJobs(t, s.ns, "allowed-image") > 0 }, time.Minute, 250*time.Millisecond,
		"an allowed image runs")
}

// TestGuardForbidsRunnerCLIConfig: with --forbid-runner-cli-config a
// Workspace whose own or Project-default runner has a CLI configuration
// is refused before any Job, so the operator's configuration (its
// provider mirror) holds for every run; one without runs.
func TestGuardForbidsRunnerCLIConfig(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStackWith(t, stackOptions{Workspace: func(o *config.Options) { o.Guards.ForbidCLIConfig = true }})
	s.gitRepository("infra", copyConfig(t, "hello"))
	cliConfig := &magosv1.CLIConfigSpec{SecretName: "direct-providers"}
	require.NoError(t, env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "direct-providers", Namespace: s.ns},
		StringData: map[string]string{"tofurc": "provider_installation {\n  direct {}\n}\n"}}))
	require.NoError(t, env.Client.Create(ctx, &magosv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "direct", Namespace: s.ns},
		Spec: magosv1.ProjectSpec{Defaults: &magosv1.ProjectDefaults{Runner: &magosv1.RunnerSpec{CLIConfig: cliConfig}}}}))

	s.newWorkspace("own-config", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.Runner = &magosv1.RunnerSpec{CLIConfig: cliConfig}
	})
	s.newWorkspace("project-config", "infra", withProject("direct"))
	s.newWorkspace("no-config", "infra", nil)
	// The guard comes before the wait for a Secret that does not exist:
	// a forbidden configuration is refused at once, not once it appears.
	s.newWorkspace("missing-config", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.Runner = &magosv1.RunnerSpec{CLIConfig: &magosv1.CLIConfigSpec{SecretName: "not-yet"}}
	})
	s.requireRefused("missing-config", magosv1.ReasonCLIConfigNotAllowed, "not-yet")
	s.requireRefused("own-config", magosv1.ReasonCLIConfigNotAllowed, "direct-providers")
	s.requireRefused("project-config", magosv1.ReasonCLIConfigNotAllowed, "direct-providers")
	require.Eventually(t, func() bool { return planJobs(t, s.ns, "no-config") > 0 }, time.Minute, 250*time.Millisecond,
		"a Workspace without a CLI configuration runs")
	assert.Zero(t, planJobs(t, s.ns, "own-config")+planJobs(t, s.ns, "project-config"), "no Job for a refused Workspace")
}

func TestGuardClusterPolicyCannotBeDodged(t *testing.T) {
	env.Require(t)
	label := rand.String(8)
	validatingPolicy(t, "v1", label, "Deny", forbidsSecret, "cluster rule: no secrets in terraform_data")
	unrelated := rand.String(8)
	validatingPolicy(t, "v1", unrelated, "Deny", allowsGreeting, "only terraform_data")
	s := newStackWith(t, stackOptions{Workspace: func(o *config.Options) {
		o.Guards.ClusterPolicySelector = &metav1.LabelSelector{MatchLabels: map[string]string{"policy.magos.dev/set": label}}
	}})
	s.gitRepository("infra", copyConfig(t, "hello"))

	// One Workspace selects no policy at all, the other only a lenient one.
	s.newWorkspace("no-policy", "infra", nil)
	s.newWorkspace("own-policy", "infra", selecting(unrelated))
	for _, name := range []string{"no-policy", "own-policy"} {
		ws := s.waitWorkspace(name, 3*time.Minute, "is blocked by the cluster policy", func(ws *magosv1.Workspace) bool {
			return ws.Status.Plan != nil && ws.Status.Plan.Policy != nil && ws.Status.Phase == magosv1.PhaseFailed
		})
		require.NotEmpty(t, ws.Status.Plan.Policy.Violations, name)
		assert.Equal(t, "cluster rule: no secrets in terraform_data", ws.Status.Plan.Policy.Violations[0].Message, name)
		assert.Equal(t, magosv1.ReasonPolicyViolation, conditions.Get(ws, magosv1.PolicyPassedCondition).Reason, name)
		require.Never(t, func() bool { return applyJobs(t, s.ns, name) > 0 }, 2*time.Second, 250*time.Millisecond,
			"%s is never applied", name)
	}
}

func TestProjectAllowsServiceAccountAnnotationValues(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	s.gitRepository("infra", copyConfig(t, "hello"))
	const key = "eks.amazonaws.com/role-arn"
	require.NoError(t, env.Client.Create(ctx, &magosv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Namespace: s.ns},
		Spec: magosv1.ProjectSpec{AllowedServiceAccountAnnotationValues: []magosv1.AnnotationRule{
			{Key: key, Values: []string{"arn:aws:iam::111122223333:role/team-a-*"}},
		}}}))
	role := func(arn string) func(*magosv1.Workspace) {
		return func(ws *magosv1.Workspace) {
			withProject("team-a")(ws)
			ws.Spec.Runner = &magosv1.RunnerSpec{ServiceAccountAnnotations: map[string]string{key: arn}}
		}
	}
	s.newWorkspace("intruder", "infra", role("arn:aws:iam::111122223333:role/platform-admin"))
	s.newWorkspace("tenant", "infra", role("arn:aws:iam::111122223333:role/team-a-deployer"))

	s.requireRefused("intruder", magosv1.ReasonAnnotationNotAllowed, "team-a-*")
	require.Eventually(t, func() bool {
		var sa corev1.ServiceAccount
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: magosv1.RunnerServiceAccountName("tenant")}, &sa)
		return err == nil && sa.Annotations[key] == "arn:aws:iam::111122223333:role/team-a-deployer"
	}, time.Minute, 250*time.Millisecond, "an allowed value reaches the runner ServiceAccount")
	var sa corev1.ServiceAccount
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: magosv1.RunnerServiceAccountName("intruder")}, &sa)
	assert.True(t, err != nil || sa.Annotations[key] == "", "a refused value never reaches a ServiceAccount")
}

// TestProjectClaimsItsNamespace: a Project with spec.members: Namespace
// decides membership, not the Workspace: one that names no Project or
// another stalls before any run, a member runs, and a second claimant
// stops every Workspace of the namespace until one claim is withdrawn.
func TestProjectClaimsItsNamespace(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	project := func(name string, members magosv1.ProjectMembers) *magosv1.Project {
		p := &magosv1.Project{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns}, Spec: magosv1.ProjectSpec{Members: members}}
		require.NoError(t, env.Client.Create(ctx, p))
		return p
	}
	project("platform", magosv1.MembersNamespace)
	project("lenient", magosv1.MembersReferencing)
	in := func(p string) func(*magosv1.Workspace) {
		return func(ws *magosv1.Workspace) { ws.Spec.ProjectRef = &magosv1.LocalObjectReference{Name: p} }
	}

	s.newWorkspace("member", "infra", in("platform"))
	s.newWorkspace("loose", "infra", nil)
	s.newWorkspace("elsewhere", "infra", in("lenient"))
	s.requireRefused("loose", magosv1.ReasonProjectClaimsNamespace, "belongs to Project platform (spec.members: Namespace): set spec.projectRef.name to platform")
	s.requireRefused("elsewhere", magosv1.ReasonProjectClaimsNamespace, "belongs to Project platform (spec.members: Namespace), not lenient")
	s.waitWorkspace("member", 3*time.Minute, "runs", appliedRevision(rev))

	second := project("rival", magosv1.MembersNamespace)
	ws := s.waitWorkspace("member", time.Minute, "stalls while two Projects claim the namespace", stalledWith(magosv1.ReasonProjectClaimsNamespace))
	assert.Contains(t, conditions.Get(ws, magosv1.StalledCondition).Message, "claimed by Projects platform, rival")
	require.NoError(t, env.Client.Delete(ctx, second))
	s.waitWorkspace("member", time.Minute, "runs again once one Project claims it", func(ws *magosv1.Workspace) bool {
		return conditions.Get(ws, magosv1.StalledCondition) == nil && appliedRevision(rev)(ws)
	})
}

// TestGuardNamespacedPoliciesOnlyWhereAllowed: a namespace's own
// NamespacedValidatingPolicies run its owners' CEL in the controller's one
// policy engine, so they gate plans only in namespaces the admin allows
// (--namespaced-policies-namespace-selector). Elsewhere they are ignored
// and the Workspace says so; a cluster policy still gates it.
func TestGuardNamespacedPoliciesOnlyWhereAllowed(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	const allow = "magos.dev/namespaced-policies"
	s := newStackWith(t, stackOptions{Workspace: func(o *config.Options) {
		sel, err := labels.Parse(allow + "=true")
		require.NoError(t, err)
		o.Guards.NamespacedPoliciesIn = sel
	}})
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	label := rand.String(8)
	doc := fmt.Sprintf(`
apiVersion: policies.kyverno.io/v1
kind: NamespacedValidatingPolicy
metadata:
  name: team-rule
  namespace: %s
  labels:
    policy.magos.dev/set: %q
spec:
  evaluation:
    mode: JSON
  validationActions: [Deny]
  validations:
    - expression: %q
      message: "team rule: no secrets in terraform_data"
`, s.ns, label, forbidsSecret)
	p := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(doc), &p.Object))
	require.NoError(t, env.Client.Create(ctx, p))

	s.newWorkspace("not-allowed", "infra", selecting(label))
	ws := s.waitWorkspace("not-allowed", 3*time.Minute, "applies: its namespace's policy does not gate it", appliedRevision(rev))
	require.NotNil(t, ws.Status.LastApplied)
	requireEvent(t, s.ns, "not-allowed", magosv1.ReasonNamespacedPolicyIgnored)
	assert.Contains(t, conditions.Get(ws, magosv1.PolicyPassedCondition).Message, "ignored NamespacedValidatingPolicies "+s.ns+"/team-rule",
		"the verdict names the policy it left out")

	var ns corev1.Namespace
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Name: s.ns}, &ns))
	ns.Labels[allow] = "true"
	require.NoError(t, env.Client.Update(ctx, &ns))
	s.newWorkspace("allowed", "infra", selecting(label))
	ws = s.waitWorkspace("allowed", 3*time.Minute, "is blocked by its namespace's policy", func(ws *magosv1.Workspace) bool {
		return ws.Status.Plan != nil && ws.Status.Plan.Policy != nil && ws.Status.Phase == magosv1.PhaseFailed
	})
	require.NotEmpty(t, ws.Status.Plan.Policy.Violations)
	assert.Equal(t, "team rule: no secrets in terraform_data", ws.Status.Plan.Policy.Violations[0].Message)
	assert.Zero(t, applyJobs(t, s.ns, "allowed"), "a denied plan is never applied")
}
