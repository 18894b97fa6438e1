package runjob

import (
	"slices"

	coordinationv1 "k8s.io/api/coordination/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// Storage is what the controller reserved for a run: every object the
// runner writes, verified to belong to the Workspace.
type Storage struct {
	// State and Lease are set once the state Secret and lock Lease are.
	State, Lease bool
	// PlanChunks is how many plan chunk Secrets exist (0..PlanChunks-1).
	PlanChunks int
	// Outputs is the outputs Secret; "" when the Workspace writes none.
	Outputs string
	// ErroredState is set once the errored-state Secret is.
	ErroredState bool
}

// Labels are the labels of every object created for a Workspace's runs.
func Labels(ws *magosv1.Workspace) map[string]string {
	return map[string]string{
		magosv1.WorkspaceLabel: ws.Name,
		magosv1.ManagedByLabel: magosv1.ManagedByValue,
	}
}

// Rules is the least the runner needs: get and update, by name, of
// the objects the controller reserved for it (its state Secret, errored-
// state Secret, plan chunk Secrets, outputs Secret and lock Lease). It gets no create: Kubernetes
// cannot restrict create by name, and create on Secrets would let config
// code mint a token for any ServiceAccount of the namespace; create on
// Leases would let it squat other Workspaces' locks or other programs'
// leader elections. Nor delete: the runner could not create them again.
func Rules(ws *magosv1.Workspace, st Storage) []rbacv1.PolicyRule {
	var secrets, leases []string
	if st.State {
		secrets = append(secrets, magosv1.StateSecretName(ws.Name))
	}
	if st.ErroredState {
		secrets = append(secrets, magosv1.ErroredStateSecretName(ws.Name))
	}
	for i := range st.PlanChunks {
		secrets = append(secrets, magosv1.PlanSecretName(ws.Name, i))
	}
	if st.Outputs != "" {
		secrets = append(secrets, st.Outputs)
	}
	if st.Lease {
		leases = append(leases, magosv1.LockLeaseName(ws.Name))
	}
	var rules []rbacv1.PolicyRule
	if len(secrets) > 0 {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: Verbs, ResourceNames: secrets})
	}
	if len(leases) > 0 {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"}, Verbs: Verbs, ResourceNames: leases})
	}
	return rules
}

// Verbs are all the runner may do, and only by name.
var Verbs = []string{"get", "update"}

// PlanRules are Rules without any write to the state, the
// errored-state or the outputs Secret: a plan reads the state and takes the lock, and stores
// its plan, but never writes state or outputs. Config code running at plan
// time (providers, external data sources) gets no more than this.
func PlanRules(ws *magosv1.Workspace, st Storage) []rbacv1.PolicyRule {
	state := magosv1.StateSecretName(ws.Name)
	drop := []string{state, magosv1.ErroredStateSecretName(ws.Name)}
	if st.Outputs != "" {
		drop = append(drop, st.Outputs)
	}
	var rules []rbacv1.PolicyRule
	for _, rule := range Rules(ws, st) {
		if slices.Contains(rule.Resources, "secrets") && len(rule.ResourceNames) > 0 {
			rule.ResourceNames = slices.DeleteFunc(slices.Clone(rule.ResourceNames), func(n string) bool { return slices.Contains(drop, n) })
			if len(rule.ResourceNames) == 0 {
				continue
			}
		}
		rules = append(rules, rule)
	}
	return append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}, ResourceNames: []string{state}})
}

// Identity is one ServiceAccount a Workspace's runs use, with the
// annotations and Role rules it gets.
type Identity struct {
	Name        string
	Annotations map[string]string
	Rules       []rbacv1.PolicyRule
}

// Identities are the Workspace's two runner identities: apply and
// destroy runs use the runner ServiceAccount; plan runs the plan
// ServiceAccount, with runner.plan's annotations when set.
func Identities(ws *magosv1.Workspace, runner magosv1.RunnerSpec, st Storage) []Identity {
	planAnnotations := runner.ServiceAccountAnnotations
	if runner.Plan != nil {
		planAnnotations = runner.Plan.ServiceAccountAnnotations
	}
	return []Identity{
		{Name: magosv1.RunnerServiceAccountName(ws.Name), Annotations: runner.ServiceAccountAnnotations, Rules: Rules(ws, st)},
		{Name: magosv1.PlanRunnerServiceAccountName(ws.Name), Annotations: planAnnotations, Rules: PlanRules(ws, st)},
	}
}

// ServiceAccount is the ServiceAccount a run of phase uses.
func ServiceAccount(ws *magosv1.Workspace, phase string) string {
	if phase == magosv1.RunPlan {
		return magosv1.PlanRunnerServiceAccountName(ws.Name)
	}
	return magosv1.RunnerServiceAccountName(ws.Name)
}
