package reconciletail

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// TestForRuntimeResult: a stall is terminal, a wait is no error and keeps
// the sooner requeue, any other error drops the result for backoff.
func TestForRuntimeResult(t *testing.T) {
	transient := errors.New("transient")
	stall := rerror.Stall("InvalidSpec", errors.New("bad"))
	minute := reconcile.Result{RequeueAfter: time.Minute}
	tests := []struct {
		name     string
		res      reconcile.Result
		err      error
		want     reconcile.Result
		wantErr  error
		terminal bool
	}{
		{name: "success keeps the result", res: minute, want: minute},
		{name: "plain error drops the result", res: minute, err: transient, wantErr: transient},
		{name: "retry is returned for backoff", res: minute, err: rerror.Retry("Busy", transient), wantErr: transient},
		{name: "stall is terminal", res: minute, err: stall, wantErr: stall, terminal: true},
		{name: "wait on watches is no error and no requeue", err: rerror.Wait("SourceNotReady", "no artifact", 0)},
		{name: "wait on watches keeps the caller's requeue", res: minute, err: rerror.Wait("SourceNotReady", "no artifact", 0), want: minute},
		{name: "wait requeues after its duration", err: rerror.Wait("SourceNotReady", "no artifact", 10*time.Second), want: reconcile.Result{RequeueAfter: 10 * time.Second}},
		{name: "the sooner requeue wins", res: minute, err: rerror.Wait("SourceNotReady", "no artifact", 10*time.Second), want: reconcile.Result{RequeueAfter: 10 * time.Second}},
		{name: "the caller's sooner requeue wins", res: reconcile.Result{RequeueAfter: time.Second}, err: rerror.Wait("SourceNotReady", "no artifact", time.Hour), want: reconcile.Result{RequeueAfter: time.Second}},
		{name: "a wrapped wait is a wait", err: fmt.Errorf("resolving: %w", rerror.Wait("ProjectNotReady", "Project p not found", time.Second)), want: reconcile.Result{RequeueAfter: time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := forRuntimeResult(tt.res, tt.err)
			assert.Equal(t, tt.want, res)
			if tt.wantErr == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tt.wantErr)
			}
			assert.Equal(t, tt.terminal, errors.Is(err, reconcile.TerminalError(nil)))
			assert.Equal(t, err, forRuntime(tt.err), "ForRuntime maps the error alike")
		})
	}
}
