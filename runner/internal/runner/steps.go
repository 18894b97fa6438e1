package runner

import (
	"math"
	"time"
)

// timed runs step and stores how long it took in *seconds, rounded to the
// millisecond (RunResult.Steps), whether it failed or not. A step that ran
// takes at least a millisecond, so that 0 keeps meaning "not reached".
func timed(seconds *float64, step func() error) error {
	start := time.Now()
	err := step()
	*seconds = max(math.Round(time.Since(start).Seconds()*1000)/1000, 0.001)
	return err
}
