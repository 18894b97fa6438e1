// Package configtree says which bytes of a source artifact a Workspace's
// plan can depend on, and digests them, so that a revision that changes
// none of them is not planned again (a monorepo commit to envs/dev does
// not re-plan envs/prod).
//
// The rule is sound by construction: Tree.Content follows what OpenTofu
// reads (the Workspace's directory and every local module it calls, in
// every form the engine accepts; every path a path-reading function or a
// provider attribute names, when it is a literal relative to path.module
// or path.root; every link, resolved as the runner's file system resolves
// it), and whatever it cannot follow exactly (a path built from a
// variable, a provider function, a remote module without an exact version
// or commit, a link out of the artifact, a file too large to parse) makes
// the digest unknown, and the revision is planned. docs/flux.md states the
// rule as a contract, case by case.
//
// Reading an artifact (Read) only digests files and keeps configuration
// sources; a configuration is parsed when a Workspace reaches its
// directory, after its nesting is checked against bounds that keep HCL's
// recursive parser within the stack (RefusedError): one hostile file
// stalls the Workspaces that read it, not the controller.
package configtree
