package setup

import (
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// parseFlags binds Options to a fresh flag set and parses args.
func parseFlags(t *testing.T, args ...string) (Options, error) {
	t.Helper()
	var o Options
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.BindFlags(fs)
	return o, fs.Parse(args)
}

func TestWatchLabelSelectorFlag(t *testing.T) {
	tests := []struct {
		arg string
		// owns says, by the object's shard key ("" for none), whether the shard owns it.
		owns map[string]bool
	}{
		{arg: "--watch-label-selector=sharding.fluxcd.io/key=a", owns: map[string]bool{"a": true, "b": false, "": false}},
		{arg: "--watch-label-selector=!sharding.fluxcd.io/key", owns: map[string]bool{"a": false, "": true}},
	}
	for _, tc := range tests {
		t.Run(tc.arg, func(t *testing.T) {
			o, err := parseFlags(t, tc.arg)
			require.NoError(t, err)
			require.NotNil(t, o.WatchLabelSelector)
			for key, want := range tc.owns {
				set := labels.Set{}
				if key != "" {
					set[ShardKeyLabel] = key
				}
				assert.Equal(t, want, o.WatchLabelSelector.Matches(set), "object with shard key %q", key)
			}
		})
	}

	t.Run("empty selects all", func(t *testing.T) {
		o, err := parseFlags(t, "--watch-label-selector=")
		require.NoError(t, err)
		assert.Nil(t, o.WatchLabelSelector)
	})
	t.Run("a bad selector fails at parse time", func(t *testing.T) {
		_, err := parseFlags(t, "--watch-label-selector=sharding.fluxcd.io/key==a=b")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "watch-label-selector")
	})
}

func TestShardFlag(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
		lease   string
	}{
		{name: "unsharded", lease: "magos-workspace-controller"},
		{name: "default shard keeps the unsharded Lease", args: []string{"--watch-label-selector=!" + ShardKeyLabel},
			lease: "magos-workspace-controller"},
		{name: "named shard", args: []string{"--watch-label-selector=" + ShardKeyLabel + "=a", "--shard=a"},
			lease: "magos-workspace-controller-shard-a"},
		{name: "shard without selector", args: []string{"--shard=a"}, wantErr: "needs --watch-label-selector"},
		{name: "shard not a DNS label", args: []string{"--watch-label-selector=" + ShardKeyLabel + "=A", "--shard=A"},
			wantErr: `--shard "A"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseFlags(t, tc.args...)
			require.NoError(t, err)
			err = o.validateShard()
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.lease, LeaseName("workspace", o.Shard))
		})
	}
}

func TestCacheByObjectFiltersOnlyTheOwnedKind(t *testing.T) {
	o, err := parseFlags(t, "--watch-label-selector="+ShardKeyLabel+"=a")
	require.NoError(t, err)
	byObject, err := o.cacheByObject(&magosv1.Workspace{})
	require.NoError(t, err)

	filtered := map[string]labels.Selector{}
	for obj, by := range byObject {
		switch obj.(type) {
		case *magosv1.Workspace:
			filtered["Workspace"] = by.Label
		case *corev1.Pod:
			filtered["Pod"] = by.Label
		case *batchv1.Job:
			assert.Nil(t, by.Label, "Jobs are trimmed, not filtered")
		default:
			t.Errorf("unexpected cache filter on %T", obj)
		}
	}
	require.Len(t, filtered, 2, "runner Pods and the owned Workspaces only")
	assert.True(t, filtered["Workspace"].Matches(labels.Set{ShardKeyLabel: "a"}))
	assert.False(t, filtered["Workspace"].Matches(labels.Set{ShardKeyLabel: "b"}))
	assert.False(t, filtered["Pod"].Matches(labels.Set{ShardKeyLabel: "a"}), "the Pod filter stays the runner Pod filter")

	unsharded, err := Options{}.cacheByObject(&magosv1.Workspace{})
	require.NoError(t, err)
	for obj, by := range unsharded {
		if _, ok := obj.(*magosv1.Workspace); ok {
			assert.Nil(t, by.Label, "without a selector Workspaces are not filtered")
			assert.NotNil(t, by.Transform, "Workspaces share their common strings")
		}
	}

	projects, err := o.cacheByObject(&magosv1.Project{})
	require.NoError(t, err)
	for obj, by := range projects {
		switch obj.(type) {
		case *magosv1.Project:
			assert.True(t, by.Label.Matches(labels.Set{ShardKeyLabel: "a"}), "the owned kind is filtered")
		case *magosv1.Workspace:
			assert.Nil(t, by.Label, "another controller's Workspaces are not filtered")
		}
	}
}
