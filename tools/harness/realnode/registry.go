package realnode

import (
	"fmt"
	"os"
	"path/filepath"
)

// PlainHTTPRegistry makes the runtime pull from the registry at host
// (host:port on the node's network) over plain HTTP, as a cluster's
// runtime is configured for an in-cluster registry without TLS. It takes
// effect on the next pull: containerd reads certs.d/<host>/hosts.toml
// each time.
func (n *Node) PlainHTTPRegistry(host string) error {
	dir := filepath.Join(n.Dir, "containerd", "certs.d", host)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	hosts := fmt.Sprintf("server = %[1]q\n\n[host.%[1]q]\n  capabilities = [\"pull\", \"resolve\"]\n", "http://"+host)
	return os.WriteFile(filepath.Join(dir, "hosts.toml"), []byte(hosts), 0o644)
}
