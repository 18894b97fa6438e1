package runner

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestTimedRecordsTheStepEvenWhenItFails(t *testing.T) {
	var slow, fast float64
	failed := errors.New("init failed")
	err := timed(&slow, func() error { time.Sleep(20 * time.Millisecond); return failed })
	assert.ErrorIs(t, err, failed)
	assert.GreaterOrEqual(t, slow, 0.02)
	assert.Less(t, slow, 5.0)

	assert.NoError(t, timed(&fast, func() error { return nil }))
	assert.Equal(t, 0.001, fast, "a step that ran is never reported as not reached")
}
