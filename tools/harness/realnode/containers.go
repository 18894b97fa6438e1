package realnode

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// ContainerSpec is what containerd told runc to enforce for a container:
// the part of its OCI runtime spec the tests check.
type ContainerSpec struct {
	UID, GID        uint32
	ReadonlyRoot    bool
	NoNewPrivileges bool
	// Capabilities is the container's effective set.
	Capabilities []string
}

// ContainerSpec reads a container's OCI runtime spec from containerd; id
// is a Pod status's containerID, with or without its containerd:// prefix.
func (n *Node) ContainerSpec(ctx context.Context, id string) (*ContainerSpec, error) {
	out, err := output(ctx, "ctr", "--address", n.socket(), "--namespace", "k8s.io", "containers", "info", strings.TrimPrefix(id, "containerd://"))
	if err != nil {
		return nil, err
	}
	var info struct {
		Spec struct {
			Process struct {
				User struct {
					UID uint32 `json:"uid"`
					GID uint32 `json:"gid"`
				} `json:"user"`
				NoNewPrivileges bool `json:"noNewPrivileges"`
				Capabilities    struct {
					Effective []string `json:"effective"`
				} `json:"capabilities"`
			} `json:"process"`
			Root struct {
				Readonly bool `json:"readonly"`
			} `json:"root"`
		} `json:"Spec"`
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		return nil, fmt.Errorf("container %s: %w", id, err)
	}
	p := info.Spec.Process
	return &ContainerSpec{UID: p.User.UID, GID: p.User.GID, ReadonlyRoot: info.Spec.Root.Readonly,
		NoNewPrivileges: p.NoNewPrivileges, Capabilities: p.Capabilities.Effective}, nil
}
