package decide

import (
	"fmt"
	"time"
)

// TimeoutCappedMessage says that the asked deadline was cut to maximum.
func TimeoutCappedMessage(asked, maximum time.Duration) string {
	return fmt.Sprintf("spec.runner.timeout %s is longer than this controller's maximum run timeout %s (--max-run-timeout)", asked, maximum)
}
