package setup_test

import (
	"context"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/magos-dev/magos/controllers/internal/setup"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// A controller starts on a cluster that lacks an optional kind, says so
// (magos_optional_kind_served 0), and watches the kind once its CRD is
// installed, without a restart: as the workspace-controller does with
// Flux's sources and Kyverno's policies installed after Magos.
func TestOptionalKindIsWatchedOnceItsCRDIsInstalled(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	widget := schema.GroupVersionKind{Group: "optional.magos.test", Version: "v1", Kind: "Widget"}
	requests := make(chan reconcile.Request, 16)
	env.StartManager(t, testenv.Scheme(), ns, func(mgr ctrl.Manager) error {
		ctl, err := controller.New("optional-kinds", mgr, controller.Options{
			SkipNameValidation: ptr.To(true),
			Reconciler: reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
				requests <- req
				return reconcile.Result{}, nil
			}),
		})
		if err != nil {
			return err
		}
		return setup.WatchWhenServed(mgr, ctl, "optional-test", []setup.OptionalWatch{{
			Kind: widget.GroupKind(), Version: widget.Version,
			Handler: &handler.EnqueueRequestForObject{},
			Lacking: "no Widget is reconciled",
		}}, 200*time.Millisecond)
	})
	require.Eventually(t, func() bool { return served(t, widget.Kind) == 0 }, 10*time.Second, 50*time.Millisecond,
		"a missing kind is reported as not served")

	_, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{widgetCRD()}})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return served(t, widget.Kind) == 1 }, 20*time.Second, 50*time.Millisecond,
		"the kind is watched once its CRD is installed")

	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(widget)
	u.SetNamespace(ns)
	u.SetName("first")
	require.NoError(t, env.Client.Create(ctx, u))
	select {
	case req := <-requests:
		require.Equal(t, client.ObjectKeyFromObject(u), req.NamespacedName)
	case <-time.After(20 * time.Second):
		t.Fatal("a Widget created after its CRD was installed was not reconciled")
	}
}

// served is magos_optional_kind_served of kind for the test's controller;
// -1 before it is set.
func served(t *testing.T, kind string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != "magos_optional_kind_served" {
			continue
		}
		for _, m := range f.GetMetric() {
			if label(m, "controller") == "optional-test" && label(m, "kind") == kind {
				return m.GetGauge().GetValue()
			}
		}
	}
	return -1
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.optional.magos.test"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "optional.magos.test",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
			}},
		},
	}
}
