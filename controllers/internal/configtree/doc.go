// Package configtree says which files of a source artifact a Workspace
// reads, and digests them: the Workspace's directory (its whole subtree)
// and every local module it calls (`source = "./…"` or `"../…"`),
// transitively, as Atlantis finds a project's module files. A revision
// whose digest for a Workspace equals that of the applied plan's revision
// changes nothing the Workspace reads: a monorepo commit to envs/dev does
// not re-plan envs/prod.
//
// Files a configuration reads by other means (file("../shared/x") outside
// those directories, a remote module's own sources) are not seen; a plan
// request or a change of inputs plans regardless.
package configtree
