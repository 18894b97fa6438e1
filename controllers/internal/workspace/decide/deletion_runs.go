package decide

import magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"

// deletionRun says whether rs is one of a deletion's runs: a destroy plan,
// its apply or a destroy without a plan.
func deletionRun(rs *magosv1.RunStatus) bool {
	return rs.Phase == magosv1.RunDestroy || rs.Mode == magosv1.PlanModeDestroy
}

// destroyed says whether rs destroyed the Workspace's resources: a
// succeeded destroy, or a succeeded apply of a destroy plan.
func destroyed(rs *magosv1.RunStatus) bool {
	if rs.Result != magosv1.ResultSucceeded {
		return false
	}
	return rs.Phase == magosv1.RunDestroy || (rs.Phase == magosv1.RunApply && rs.Mode == magosv1.PlanModeDestroy)
}
