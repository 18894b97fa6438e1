// Package fence holds no code. Its test fences the pure packages (the
// Workspace's decide and runjob and the conditions and errors they use,
// configtree, the Rollout's progress, the WorkspaceSet's planning, the
// CLI's views and view model, plan comparison and rendering and
// tofu-controller mapping, the policy protocol) by their whole dependency
// sets, read with `go list -deps`: none may link controller-runtime,
// client-go or Prometheus, or any package outside the API module,
// apimachinery, the core API types and the Magos packages and modules the
// table allows; and neither they nor a Magos package they link may import
// the file system, processes or the network (os, os/exec, net, net/http,
// syscall). Lint's depguard rules (.golangci.yml) see only a file's own
// imports, not what those imports link.
package fence
