package ui

import (
	"net/http"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// events streams "changed" whenever a Workspace, Rollout or Project in
// scope changes, at most every 250 ms, for pages to refresh.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	ctx := r.Context()
	changed := make(chan struct{}, 1)
	var opts []client.ListOption
	if s.cfg.Namespace != "" {
		opts = append(opts, client.InNamespace(s.cfg.Namespace))
	}
	for _, l := range []client.ObjectList{&magosv1.WorkspaceList{}, &magosv1.RolloutList{}, &magosv1.ProjectList{}} {
		wi, err := s.cfg.Client.Watch(ctx, l, opts...)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer wi.Stop()
		go func() {
			for range wi.ResultChan() {
				select {
				case changed <- struct{}{}:
				default:
				}
			}
		}()
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(": connected\n\n"))
	flusher.Flush()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	pending := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
			pending = true
		case <-tick.C:
			if pending {
				pending = false
				_, _ = w.Write([]byte("data: changed\n\n"))
				flusher.Flush()
			}
		}
	}
}
