package e2e

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/setup"
	"github.com/magos-dev/magos/controllers/internal/workspace"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// startShard runs a workspace-controller in-process with
// --watch-label-selector=selector, its cache built by setup as the binary
// builds it, and returns that cache.
func (s *stack) startShard(selector string) cache.Cache {
	s.t.Helper()
	sel, err := labels.Parse(selector)
	require.NoError(s.t, err)
	opts := setup.Options{Concurrency: s.concurrency, WatchLabelSelector: sel, WatchNamespaces: []string{s.ns}}
	cacheOpts, err := opts.CacheOptions(&magosv1.Workspace{})
	require.NoError(s.t, err)
	var c cache.Cache
	env.StartManagerWithCache(s.t, setup.Scheme(), cacheOpts,
		func(mgr ctrl.Manager) error {
			c = mgr.GetCache()
			wc := workspace.NewController()
			wc.Options = s.workspaceOptions()
			// Each shard serves the artifact proxy on its own address, as
			// each shard's Deployment has its own Service.
			ln := newKeptListener(s.t)
			wc.Options.ArtifactProxy = config.ArtifactProxy{Listener: ln.session(), URL: "http://" + ln.Addr()}
			return wc.Register(mgr, opts)
		})
	return c
}

// heldConfig is a configuration whose plan waits for a HeldState on
// loopback until it is released.
func heldConfig(t *testing.T) (*testenv.HeldState, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	h := testenv.NewHeldState(t, l)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(h.Config()), 0o644))
	return h, dir
}

// inShard labels a Workspace into shard key.
func inShard(key string) func(*magosv1.Workspace) {
	return func(ws *magosv1.Workspace) { ws.Labels = map[string]string{setup.ShardKeyLabel: key} }
}

// TestWorkspaceShards runs two shards of the workspace-controller
// (sharding.fluxcd.io/key=a and =b) on one namespace: each reconciles only
// its own Workspaces, a dependency in the other shard is named as such,
// and a Workspace moved from a to b while its plan runs is adopted by b:
// one plan Job, one apply Job, and it converges.
func TestWorkspaceShards(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStackWith(t, stackOptions{NoControllers: true})
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("in-a", "infra", inShard("a"))
	s.newWorkspace("in-b", "infra", inShard("b"))

	shardA := s.startShard(setup.ShardKeyLabel + "=a")
	s.waitWorkspace("in-a", 3*time.Minute, "shard a applies its Workspace", appliedRevision(rev))
	untouched := func() bool {
		ws := s.getWorkspace("in-b")
		// -1: the CRD's default until a controller writes status.
		return ws.Status.ObservedGeneration == -1 && len(ws.Status.Conditions) == 0 && ws.Status.CurrentRun == nil &&
			planJobs(t, s.ns, "in-b") == 0
	}
	require.True(t, untouched(), "shard a wrote no status and started no Job for shard b's Workspace")
	require.Never(t, func() bool { return !untouched() }, 3*time.Second, 250*time.Millisecond, "shard a leaves shard b's Workspace alone")

	shardB := s.startShard(setup.ShardKeyLabel + "=b")
	s.waitWorkspace("in-b", 3*time.Minute, "shard b applies its Workspace", appliedRevision(rev))
	assert.Equal(t, 1, planJobs(t, s.ns, "in-a"), "shard b started nothing for shard a's Workspace")
	assert.Equal(t, 1, applyJobs(t, s.ns, "in-a"))

	t.Run("a dependency in another shard", func(t *testing.T) {
		s.newWorkspace("needs-a", "infra", func(ws *magosv1.Workspace) {
			inShard("b")(ws)
			ws.Spec.DependsOn = []magosv1.LocalObjectReference{{Name: "in-a"}}
		})
		ws := s.waitWorkspace("needs-a", time.Minute, "waits, naming the shard", func(ws *magosv1.Workspace) bool {
			ready := conditions.Get(ws, magosv1.ReadyCondition)
			return ready != nil && ready.Reason == magosv1.ReasonDependencyNotReady
		})
		assert.Contains(t, conditions.Get(ws, magosv1.ReadyCondition).Message,
			"Workspace in-a does not exist or is not in this controller's shard (sharding.fluxcd.io/key=b); keep a Workspace and its dependencies in one shard")
		assert.Zero(t, planJobs(t, s.ns, "needs-a"))
	})

	t.Run("a Workspace moved between shards mid-plan", func(t *testing.T) {
		held, dir := heldConfig(t)
		heldRev := s.gitRepository("held", dir)
		s.newWorkspace("mover", "held", inShard("a"))
		select {
		case <-held.Arrived:
		case <-time.After(3 * time.Minute):
			t.Fatal("the plan never read the held state")
		}
		require.Equal(t, 1, planJobs(t, s.ns, "mover"))

		ws := s.getWorkspace("mover")
		ws.Labels[setup.ShardKeyLabel] = "b"
		require.NoError(t, env.Client.Update(ctx, ws))
		key := client.ObjectKeyFromObject(ws)
		require.Eventually(t, func() bool {
			var inB magosv1.Workspace
			errA := shardA.Get(ctx, key, &magosv1.Workspace{})
			return apierrors.IsNotFound(errA) && shardB.Get(ctx, key, &inB) == nil && inB.Labels[setup.ShardKeyLabel] == "b"
		}, 30*time.Second, 100*time.Millisecond, "shard a lets go of the Workspace and shard b takes it")

		held.Release()
		s.waitWorkspace("mover", 3*time.Minute, "shard b finishes the run and applies", appliedRevision(heldRev))
		assert.Equal(t, 1, planJobs(t, s.ns, "mover"), "shard b adopted the running plan")
		assert.Equal(t, 1, applyJobs(t, s.ns, "mover"))
	})
}
