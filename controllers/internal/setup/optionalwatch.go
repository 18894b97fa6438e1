package setup

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/magos-dev/magos/controllers/internal/metrics"
)

// OptionalKindInterval is how often WatchWhenServed looks again for a kind
// the apiserver does not serve.
const OptionalKindInterval = 30 * time.Second

// OptionalWatch is a watch on a kind a cluster may lack, or gain after the
// controller started: Flux's source kinds, Kyverno's policies.
type OptionalWatch struct {
	Kind schema.GroupKind
	// Version, if set, is the only version read; else the preferred one.
	Version string
	// Handler and Predicates are the watch's, as for builder.Watches.
	Handler    handler.EventHandler
	Predicates []predicate.Predicate
	// Lacking says what the controller cannot do while the kind is missing.
	Lacking string
}

// WatchWhenServed starts each watch on ctl once the apiserver serves its
// kind: at once where it does, else once its CRD is installed (looked up
// every interval), without a restart. A controller never fails to start
// for a missing optional kind: it logs what it lacks, once, and
// magos_optional_kind_served is 0 until the kind is watched.
func WatchWhenServed(mgr ctrl.Manager, ctl controller.Controller, name string, watches []OptionalWatch, interval time.Duration) error {
	for _, w := range watches {
		metrics.SetOptionalKindServed(name, w.Kind.Group, w.Kind.Kind, false)
	}
	return mgr.Add(&optionalWatches{mgr: mgr, ctl: ctl, name: name, pending: watches, interval: interval})
}

type optionalWatches struct {
	mgr      ctrl.Manager
	ctl      controller.Controller
	name     string
	pending  []OptionalWatch
	interval time.Duration
}

// NeedLeaderElection: the watches feed the controller, which runs on the
// leader.
func (*optionalWatches) NeedLeaderElection() bool { return true }

func (o *optionalWatches) Start(ctx context.Context) error {
	log := ctrl.Log.WithName(o.name).WithName("optional-kinds")
	reported := map[schema.GroupKind]bool{}
	for {
		var still []OptionalWatch
		for _, w := range o.pending {
			started, err := o.start(w)
			switch {
			case started:
				metrics.SetOptionalKindServed(o.name, w.Kind.Group, w.Kind.Kind, true)
				if reported[w.Kind] {
					log.Info("The kind is now served; watching it", "kind", w.Kind.String())
				}
				continue
			case err != nil:
				log.Error(err, "Looking up an optional kind", "kind", w.Kind.String())
			case !reported[w.Kind]:
				log.Info(fmt.Sprintf("The apiserver does not serve %s: %s; it is watched once its CRD is installed", w.Kind, w.Lacking), "kind", w.Kind.String())
				reported[w.Kind] = true
			}
			still = append(still, w)
		}
		o.pending = still
		if len(o.pending) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(o.interval):
		}
	}
}

// start adds w's watch when its kind is served; started is false, with no
// error, when it is not.
func (o *optionalWatches) start(w OptionalWatch) (started bool, err error) {
	var versions []string
	if w.Version != "" {
		versions = []string{w.Version}
	}
	m, err := o.mgr.GetRESTMapper().RESTMapping(w.Kind, versions...)
	if meta.IsNoMatchError(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(m.GroupVersionKind)
	if err := o.ctl.Watch(source.Kind[client.Object](o.mgr.GetCache(), u, w.Handler, w.Predicates...)); err != nil {
		return false, err
	}
	return true, nil
}
