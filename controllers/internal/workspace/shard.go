package workspace

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/magos-dev/magos/controllers/internal/setup"
)

// workspaceMissing completes "Workspace <name> ..." for a Workspace the
// cache does not hold. In a shard (a --watch-label-selector) the cache
// holds this shard's Workspaces only, so the Workspace may exist in
// another shard: the controller does not read it there (that would be an
// uncached read per reconcile) and says so instead.
func workspaceMissing(shard labels.Selector) string {
	if shard == nil {
		return "does not exist"
	}
	return fmt.Sprintf("does not exist or is not in this controller's shard (%s); keep a Workspace and its dependencies in one shard (label %s)",
		shard, setup.ShardKeyLabel)
}
