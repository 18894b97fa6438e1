package executor

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "a", "EMPTY": ""}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	tests := map[string]string{
		"plain":          "plain",
		"$(A)":           "a",
		"x-$(A)-y":       "x-a-y",
		"$(EMPTY)":       "",
		"$(UNDEFINED)":   "$(UNDEFINED)",
		"$$(A)":          "$(A)",
		"$$":             "$",
		"a$":             "a$",
		"$A":             "$A",
		"$(A":            "$(A",
		"$()":            "$()",
		"$(A)$(A)$$$(A)": "aa$a",
	}
	for in, want := range tests {
		assert.Equal(t, want, expand(in, lookup), "expand(%q)", in)
	}
}
