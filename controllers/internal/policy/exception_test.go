package policy_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/policy"
	"github.com/magos-dev/magos/controllers/internal/policy/policytest"
)

// createException creates a PolicyException in namespace naming policy
// refs, with spec.properties props and expiresAt (omitted when zero).
func createException(t *testing.T, version, namespace, name string, expires time.Time, props map[string]string, refs ...string) {
	t.Helper()
	doc := fmt.Sprintf("apiVersion: %s/%s\nkind: PolicyException\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  policyRefs:\n", policy.Group, version, name, namespace)
	for _, r := range refs {
		doc += fmt.Sprintf("  - name: %s\n    kind: ValidatingPolicy\n", r)
	}
	if !expires.IsZero() {
		doc += fmt.Sprintf("  expiresAt: %q\n", expires.UTC().Format(time.RFC3339))
	}
	doc += "  properties:\n"
	for k, v := range props {
		doc += fmt.Sprintf("    %s: %q\n", k, v)
	}
	u := &unstructured.Unstructured{}
	require.NoError(t, yamlUnmarshal([]byte(doc), &u.Object))
	require.NoError(t, env.Client.Create(context.Background(), u), "creating %s", name)
}

// TestListWaivers: only exceptions in the Workspace's namespace bound to
// the Workspace and the plan digest, naming their creator and not
// expired, waive; bound ones that cannot are named with why; each waiver
// attaches to the policies it refers to.
func TestListWaivers(t *testing.T) {
	env.Require(t)
	ns, other := env.NewNamespace(t), env.NewNamespace(t)
	now := time.Now()
	bound := func(digest string, extra ...string) map[string]string {
		m := map[string]string{"magos.dev/workspace": "web", "magos.dev/plan-digest": digest, "magos.dev/created-by": "alice"}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	later := now.Add(time.Hour)
	createException(t, "v1", ns, "live", later, bound("sha256:a"), "no-secrets")
	createException(t, "v1beta1", ns, "live-beta", later, bound("sha256:a"), "no-destroy")
	createException(t, "v1", ns, "older-plan", later, bound("sha256:old"), "no-secrets")
	createException(t, "v1", ns, "other-workspace", later, bound("sha256:a", "magos.dev/workspace", "api"), "no-secrets")
	createException(t, "v1", other, "other-namespace", later, bound("sha256:a"), "no-secrets")
	createException(t, "v1", ns, "expired", now.Add(-time.Minute), bound("sha256:a"), "no-secrets")
	createException(t, "v1", ns, "no-expiry", time.Time{}, bound("sha256:a"), "no-secrets")
	createException(t, "v1", ns, "anonymous", later, bound("sha256:a", "magos.dev/created-by", ""), "no-secrets")
	createException(t, "v1", ns, "plain-kyverno", later, map[string]string{"ticket": "T-1"}, "no-secrets")

	w, err := policy.ListWaivers(context.Background(), env.Client, ns, "web", "sha256:a", now)
	require.NoError(t, err)
	var live []string
	for _, e := range w.Live {
		live = append(live, e.Name())
	}
	assert.Equal(t, []string{ns + "/live", ns + "/live-beta"}, live)
	require.Len(t, w.Ignored, 3)
	assert.Contains(t, w.Ignored[0], ns+"/anonymous: a waiver names its creator")
	assert.Contains(t, w.Ignored[1], ns+"/expired: expired at ")
	assert.Contains(t, w.Ignored[2], ns+"/no-expiry: a waiver needs spec.expiresAt")
	assert.WithinDuration(t, later, w.Expires(), time.Second)

	none, err := policy.ListWaivers(context.Background(), env.Client, ns, "web", "", now)
	require.NoError(t, err)
	assert.Empty(t, none.Live, "a plan without a digest is never waived")

	gate := []policy.Policy{
		policytest.JSONPolicy(t, "no-secrets", policytest.SpecAlwaysPass),
		policytest.JSONPolicy(t, "no-destroy", policytest.SpecAlwaysPass),
		policytest.JSONPolicy(t, "tags", policytest.SpecAlwaysPass),
	}
	for _, p := range gate {
		p.Object.SetAnnotations(map[string]string{magosv1.WaivableAnnotation: "true"})
	}
	policies := policy.WithWaivers(gate, w.Live)
	require.Len(t, policies[0].Exceptions, 1)
	assert.Equal(t, ns+"/live", policies[0].Exceptions[0].Name())
	require.Len(t, policies[1].Exceptions, 1)
	assert.Equal(t, ns+"/live-beta", policies[1].Exceptions[0].Name())
	assert.Empty(t, policies[2].Exceptions)
}
