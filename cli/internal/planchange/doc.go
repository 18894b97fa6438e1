// Package planchange says whether the plans of different Workspaces are
// the same change, and where they differ; pure, with no client.
//
// What "the same change" means when plans of different Workspaces are
// compared (plan diff, approve --stage): everything the plan JSON says
// the apply will do, normalised (object keys sorted, numbers exact,
// resources by address), so one approval never covers a change it did not
// compare:
//
//   - each resource change that is not a no-op: its actions, its planned
//     values (after), which of them are unknown until applied
//     (after_unknown), which are sensitive before and after, the paths
//     forcing a replacement, the reason for the action, an import, the
//     provider, the address, index and deposed key;
//   - each output change: actions, value, unknown, sensitivity;
//   - the configuration the engine applies the plan with (provisioners and
//     their commands, expressions, module calls, provider configuration);
//   - the engine version, and whether the plan is applyable, complete and
//     errored.
//
// Left out, because they differ from one Workspace to the next without
// being part of what is applied: values before the change (they hold each
// Workspace's IDs), the prior state, the drift found, check results, the
// plan's timestamp, and the variables' values (they reach the change
// through the planned values and the configuration's expressions, which
// are compared). Attributes the user names (--ignore-attributes) are left
// out of the planned values, unknown values and sensitivity of every
// resource change.
package planchange
