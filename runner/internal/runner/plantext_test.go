package runner

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/runner/internal/mask"
)

func TestReadableText(t *testing.T) {
	const secret = "hunter2-very-secret"
	masker := mask.New(secret)
	tests := []struct {
		name  string
		text  string
		limit int
		want  string
	}{
		{name: "short text is kept", text: "  # terraform_data.app will be created\n", limit: 1000,
			want: "  # terraform_data.app will be created\n"},
		{name: "secrets are masked", text: `input = "app-` + secret + `"` + "\n", limit: 1000,
			want: `input = "app-(sensitive value)"` + "\n"},
		{name: "terminal escapes and other control characters are replaced", text: "\x1b[1mbold\x1b[0m\r\tok\x7f\n", limit: 1000,
			want: "\uFFFD[1mbold\uFFFD[0m\uFFFD\tok\uFFFD\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, string(readableText(tt.text, masker.String, tt.limit)))
		})
	}
}

// A long text is cut at a line end within the limit, with a marker; the
// masking comes first, so a secret across the cut is not half shown.
func TestReadableTextIsCutAtALineWithAMarker(t *testing.T) {
	const secret = "hunter2-very-secret"
	var b strings.Builder
	for b.Len() < 4000 {
		b.WriteString("  + input = \"" + secret + "\" # é\n")
	}
	text := b.String()
	const limit = 1000
	got := string(readableText(text, mask.New(secret).String, limit))

	assert.LessOrEqual(t, len(got), limit)
	assert.True(t, utf8.ValidString(got))
	assert.NotContains(t, got, "hunter2")
	before, marker, found := strings.Cut(got, "\n... (truncated: ")
	require.True(t, found, "the text says it was cut: %q", got)
	assert.Contains(t, marker, "more than the 1000 stored")
	lines := strings.Split(before, "\n")
	for _, line := range lines {
		assert.Equal(t, `  + input = "(sensitive value)" # é`, line, "only whole lines are kept")
	}
	assert.Greater(t, len(lines), 10)
}
