package workspace

import (
	"fmt"
	"time"
)

// RunTimeoutCappedReason: the Workspace (or its Project) asks for a run
// deadline longer than --max-run-timeout; its runs get the maximum. A
// Warning event with this reason comes with each run started so.
const RunTimeoutCappedReason = "RunTimeoutCapped"

// timeoutCappedMessage says that the asked deadline was cut to maximum.
func timeoutCappedMessage(asked, maximum time.Duration) string {
	return fmt.Sprintf("spec.runner.timeout %s is longer than this controller's maximum run timeout %s (--max-run-timeout)", asked, maximum)
}

// IntervalRaisedReason: the Workspace (or its Project) asks for drift
// re-plans more often than --min-interval allows; they come at the minimum.
const IntervalRaisedReason = "IntervalRaised"
