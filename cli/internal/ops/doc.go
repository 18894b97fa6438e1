// Package ops is what kubectl-magos does against the cluster, shared by
// the commands and the UI: reading Workspaces and their stored plans,
// approving (one plan or a Rollout stage's), requesting plans and
// retries, waiting for applies, promoting and aborting Rollouts,
// suspending, unlocking, waiving a policy denial, reading a run's output,
// importing tofu-controller's objects, and running the policy engine.
// Each operation takes a client (or a Target: a client and an object's
// key) and its arguments and returns data or a failure.Error; none
// parses flags or prints. What to show of the result is package view's.
package ops
