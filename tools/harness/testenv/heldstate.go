package testenv

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// HeldState serves an empty state to OpenTofu's http backend and holds
// every request until Release is called, so a plan that reads it through
// terraform_remote_state keeps running for as long as a test needs.
type HeldState struct {
	// URL is the state's address.
	URL string
	// Arrived receives once a request waits.
	Arrived chan struct{}
	release func()
}

// NewHeldState serves a HeldState on l until t ends.
func NewHeldState(t testing.TB, l net.Listener) *HeldState {
	t.Helper()
	released := make(chan struct{})
	h := &HeldState{URL: "http://" + l.Addr().String() + "/state", Arrived: make(chan struct{}, 1)}
	var once sync.Once
	h.release = func() { once.Do(func() { close(released) }) }
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		select {
		case h.Arrived <- struct{}{}:
		default:
		}
		<-released
		fmt.Fprint(w, `{"version":4,"terraform_version":"1.10.6","serial":1,"lineage":"held","outputs":{},"resources":[]}`)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { h.Release(); _ = srv.Close() })
	return h
}

// Release answers every request, those waiting and those to come.
func (h *HeldState) Release() { h.release() }

// Config is a configuration whose plan reads the held state.
func (h *HeldState) Config() string {
	return fmt.Sprintf(`
data "terraform_remote_state" "held" {
  backend = "http"
  config  = { address = %q }
}

resource "terraform_data" "held" {
  input = length(data.terraform_remote_state.held.outputs)
}
`, h.URL)
}
