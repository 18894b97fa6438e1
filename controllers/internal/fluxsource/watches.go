package fluxsource

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/magos-dev/magos/controllers/internal/setup"
)

// OptionalWatches are a controller's watches on Flux's source kinds, which
// a cluster may lack or gain after the controller started
// (setup.WatchWhenServed): a source of kind whose artifact changed is
// mapped to requests by requestsFor(kind); lacking, with %s for the kind,
// says what the controller cannot do while the kind is missing.
func OptionalWatches(requestsFor func(kind string) handler.MapFunc, lacking string) []setup.OptionalWatch {
	watches := make([]setup.OptionalWatch, 0, len(Kinds))
	for _, kind := range Kinds {
		watches = append(watches, setup.OptionalWatch{
			Kind: GroupVersion.WithKind(kind).GroupKind(), Version: GroupVersion.Version,
			Handler:    handler.EnqueueRequestsFromMapFunc(requestsFor(kind)),
			Predicates: []predicate.Predicate{ArtifactChanged{}},
			Lacking:    fmt.Sprintf(lacking, kind),
		})
	}
	return watches
}
