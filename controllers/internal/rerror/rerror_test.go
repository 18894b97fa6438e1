package rerror_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/magos-dev/magos/controllers/internal/rerror"
)

func TestKinds(t *testing.T) {
	w := rerror.Wait("SourceNotReady", "GitRepository ns/app has no artifact yet", 0)
	assert.Equal(t, "GitRepository ns/app has no artifact yet", w.Error())
	assert.True(t, rerror.IsWaiting(w))
	assert.False(t, w.Stalling)
	assert.False(t, rerror.IsWaiting(rerror.Retry("Busy", errors.New("busy"))))
	assert.False(t, rerror.IsWaiting(rerror.Stall("InvalidSpec", errors.New("bad"))))
	assert.False(t, rerror.IsWaiting(nil))
}
