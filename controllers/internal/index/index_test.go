package index

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/setup"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// Every manager gets the indexes, however many of its controllers ask for
// them and however many managers came and went before it (as in tests):
// a list by the index works in each.
func TestIndexesAreRegisteredOncePerManager(t *testing.T) {
	ns := env.NewNamespace(t)
	ctx := context.Background()
	require.NoError(t, env.Client.Create(ctx, &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: magosv1.WorkspaceSpec{
			SourceRef:  magosv1.SourceReference{Kind: "GitRepository", Name: "infra"},
			ProjectRef: &magosv1.LocalObjectReference{Name: "platform"},
			DependsOn:  []magosv1.LocalObjectReference{{Name: "network"}},
		},
	}))
	for i := range 3 {
		var mgr ctrl.Manager
		stop := env.StartManager(t, setup.Scheme(), ns, func(m ctrl.Manager) error {
			mgr = m
			for range 2 { // two controllers of one manager ask
				if err := AddWorkspaceDependsOn(m); err != nil {
					return err
				}
				if err := AddWorkspaceProjectRef(m); err != nil {
					return err
				}
			}
			return nil
		})
		for field, value := range map[string]string{WorkspaceDependsOn: "network", WorkspaceProjectRef: "platform"} {
			var err error
			ok := assert.Eventually(t, func() bool {
				var list magosv1.WorkspaceList
				err = mgr.GetClient().List(ctx, &list, client.InNamespace(ns), client.MatchingFields{field: value})
				return err == nil && len(list.Items) == 1
			}, 10*time.Second, 100*time.Millisecond, "manager %d lists by index %s", i, field)
			require.True(t, ok, "last error: %v", err)
		}
		stop()
	}
}
