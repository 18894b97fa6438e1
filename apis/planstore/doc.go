// Package planstore stores a saved plan in Kubernetes Secrets and loads it
// back, as the run contract (apis/magos/v1alpha1, run_contract.go) lays out:
//
//   - the plan is gzip(tar{plan.json, plan.txt, plan.bin}): the engine's
//     JSON rendering, the plan rendered for people (optional: bundles
//     stored without it still load) and the binary plan file, in that
//     order;
//   - the stream is cut into chunks of at most PlanChunkBytes, one Secret
//     each, named PlanSecretName(workspace, i), of type PlanSecretType, with
//     the chunk under PlanChunkKey;
//   - chunks 1..n-1 are written first and chunk 0 last; chunk 0 carries the
//     annotations (chunk count, sha256 of the joined stream, plan digest and
//     plan ID), so a reader never takes a half-written plan for a whole one;
//   - higher chunks left over from a bigger earlier plan are deleted.
//
// Names are fixed per Workspace, so every call is a get, create, update or
// delete by name and a Role can restrict the runner to those names. Load
// verifies the chunk count, the stream's sha256 and the plan digest before
// it returns anything. LoadJSON (the policy gate) and LoadText (the CLI,
// showing plan.txt) read only as far into the stream as they need, take a
// bound on what they unpack and verify the plan digest; a bigger entry is
// ErrTooLarge before it is read, and a bundle without plan.txt is
// ErrNoText. Whatever a bundle holds is untrusted input: anything that can
// write Secrets in the namespace can write it. The runner stores plans; the
// workspace-controller uses Load, LoadJSON or Stat to read them (with any
// client that can get a Secret, see Getter and GetterFunc); the CLI uses
// LoadText and LoadJSON. The package lives in the API module for that
// reason, so neither needs the other's module, and depends only on the
// Kubernetes API types, apimachinery and the Magos API types. Its tests
// against a real apiserver are in the runner module
// (runner/internal/planstore), which brings the local control plane.
package planstore
