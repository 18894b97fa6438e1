package ui

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/cli/internal/ops"
	"github.com/magos-dev/magos/cli/internal/planrender"
	"github.com/magos-dev/magos/cli/internal/plantest"
	"github.com/magos-dev/magos/cli/internal/view"
)

// The UI shows the same: the rendering of the verified JSON for a gated
// plan, and the run's text only in a block marked as not verified.
func TestUIPlanShowsWhereItComesFrom(t *testing.T) {
	ctx := context.Background()
	render := func(g planstore.Getter, p *magosv1.PlanStatus) string {
		t.Helper()
		shown, err := ops.ReadablePlan(ctx, g, "hello", p, planrender.Options{})
		require.NoError(t, err)
		ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "team"}}
		ws.Status.Plan = p
		d := view.WorkspacePageOf(ws, shown, nil, nil)
		var b bytes.Buffer
		require.NoError(t, templates.ExecuteTemplate(&b, "workspace.html", view.Page{Data: d}))
		return b.String()
	}
	html := render(plantest.StoredPlan(t, plantest.GreetingPlan, plantest.ForgedText, false))
	assert.Contains(t, html, `<p class="plan-source verified">Rendered by kubectl magos from the plan JSON`)
	assert.Contains(t, html, "terraform_data.greeting will be created")
	assert.NotContains(t, html, "No changes")
	assert.NotContains(t, html, "NOT VERIFIED")

	html = render(plantest.StoredPlan(t, "", plantest.ForgedText, true))
	assert.Contains(t, html, `<p class="plan-source unverified">NOT VERIFIED: `)
	assert.Contains(t, html, `<pre class="plan unverified"`)
}
