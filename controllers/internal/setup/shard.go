package setup

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ShardKeyLabel is the label that assigns an object to a shard: Flux's
// sharding key. A shard watches ShardKeyLabel=<shard>, the default shard
// !ShardKeyLabel.
const ShardKeyLabel = "sharding.fluxcd.io/key"

// parseWatchLabelSelector parses --watch-label-selector; an empty value
// selects every object (nil).
func parseWatchLabelSelector(v string) (labels.Selector, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	return labels.Parse(v)
}

// validateShard checks --shard: a DNS label, and only with a selector (a
// named shard that watches everything would reconcile the other shards'
// objects under a Lease of its own).
func (o Options) validateShard() error {
	if o.Shard == "" {
		return nil
	}
	if errs := validation.IsDNS1123Label(o.Shard); len(errs) > 0 {
		return fmt.Errorf("--shard %q: %s", o.Shard, strings.Join(errs, "; "))
	}
	if o.WatchLabelSelector == nil {
		return fmt.Errorf("--shard %q needs --watch-label-selector (e.g. %s=%s)", o.Shard, ShardKeyLabel, o.Shard)
	}
	return nil
}

// LeaseName is the leader election Lease of the controller called name in
// shard (empty: unsharded or the default shard): magos-<name>-controller,
// with -shard-<shard> appended for a named shard.
func LeaseName(name, shard string) string {
	lease := "magos-" + name + "-controller"
	if shard != "" {
		lease += "-shard-" + shard
	}
	return lease
}
