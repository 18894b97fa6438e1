package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestPlanRate(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := NewPlanRate(2, time.Minute)
	assert.Zero(t, r.wait("a", t0))
	r.start("a", t0)
	r.start("a", t0.Add(10*time.Second))
	assert.Equal(t, 20*time.Second, r.wait("a", t0.Add(40*time.Second)), "the third waits until the first leaves the window")
	assert.Zero(t, r.wait("b", t0.Add(40*time.Second)), "another namespace has its own")
	assert.Zero(t, r.wait("a", t0.Add(time.Minute)), "the first left the window")
	r.start("a", t0.Add(time.Minute))
	assert.Equal(t, 10*time.Second, r.wait("a", t0.Add(time.Minute)), "the second leaves next")
	assert.Zero(t, r.wait("a", t0.Add(3*time.Minute)))
	r.start("a", t0.Add(3*time.Minute))
	assert.Len(t, r.started["a"], 1, "starts that left the window are forgotten")

	var none *PlanRate
	none.start("a", t0)
	assert.Zero(t, none.wait("a", t0), "no bound")
}
