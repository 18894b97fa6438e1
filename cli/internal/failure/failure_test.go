package failure

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestExitCode(t *testing.T) {
	assert.Equal(t, ExitOK, ExitCode(nil))
	assert.Equal(t, ExitUsage, ExitCode(Usage("wrong")))
	assert.Equal(t, ExitFailure, ExitCode(Refused("no")))
	assert.Equal(t, ExitFailure, ExitCode(fmt.Errorf("wrapped: %w", NotFound("gone"))))
	assert.Equal(t, ExitUsage, ExitCode(errors.New(`unknown flag: --frobnicate`)), "cobra's own complaints")
	assert.Equal(t, ExitFailure, ExitCode(errors.New("the apiserver said no")))
}
