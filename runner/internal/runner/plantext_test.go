package runner

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/apis/plansummary"
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

func TestPrintedRendering(t *testing.T) {
	const rendered = `OpenTofu used the selected providers to generate the following execution
plan. Resource actions are indicated with the following symbols:
  ~ update in-place

OpenTofu will perform the following actions:

  # terraform_data.r[0] will be updated in-place
  ~ resource "terraform_data" "r" {
      ~ input  = "generation-2-0" -> "generation-3-0"
    }

Plan: 0 to add, 1 to change, 0 to destroy.
`
	tests := []struct {
		name    string
		printed string
		want    string
		ok      bool
	}{
		{name: "refresh and read progress before the plan is dropped", printed: `terraform_data.r[0]: Refreshing state... [id=ff524417]
data.http.x: Reading...
data.http.x: Still reading... [10s elapsed]
data.http.x: Read complete after 11s [id=https://example.test]

` + rendered, want: rendered, ok: true},
		{name: "a first plan has no progress", printed: rendered, want: rendered, ok: true},
		{name: "no changes", printed: "terraform_data.r[0]: Refreshing state... [id=ff524417]\n\nNo changes. Your infrastructure matches the configuration.\n",
			want: "No changes. Your infrastructure matches the configuration.\n", ok: true},
		{name: "only outputs change", printed: "\nChanges to Outputs:\n  + a = \"b\"\n", want: "Changes to Outputs:\n  + a = \"b\"\n", ok: true},
		{name: "nothing printed", printed: "", ok: false},
		{name: "only progress", printed: "terraform_data.r[0]: Refreshing state... [id=ff524417]\n", ok: false},
		{name: "no summary line", printed: "Something else entirely\n", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p printedOutput
			n, err := p.Write([]byte(tt.printed))
			require.NoError(t, err)
			require.Equal(t, len(tt.printed), n)
			got, ok := p.rendering()
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

// More printed than printedOutput keeps is not a whole rendering: the
// caller shows the plan instead. Writes still succeed in full, so the
// engine's output is never cut short.
func TestPrintedOutputBeyondItsLimit(t *testing.T) {
	var p printedOutput
	line := []byte(strings.Repeat("x", 1000) + "\n")
	for p.buf.Len() < printedLimit {
		n, err := p.Write(line)
		require.NoError(t, err)
		require.Equal(t, len(line), n)
	}
	summary := []byte("Plan: 1 to add, 0 to change, 0 to destroy.\n")
	n, err := p.Write(summary)
	require.NoError(t, err)
	assert.Equal(t, len(summary), n)
	assert.Equal(t, printedLimit, p.buf.Len())
	_, ok := p.rendering()
	assert.False(t, ok)
	var none *printedOutput
	_, ok = none.rendering()
	assert.False(t, ok)
}

func TestPrintedCounts(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		want   plansummary.Counts
		wantOK bool
	}{
		{"counts", "  # terraform_data.r will be created\n\nPlan: 3 to add, 1 to change, 2 to destroy.\n", plansummary.Counts{Add: 3, Change: 1, Destroy: 2}, true},
		{"imports and forgets", "Plan: 1 to import, 2 to add, 0 to change, 0 to destroy, 1 to forget.\n", plansummary.Counts{Add: 2}, true},
		{"no changes", "No changes. Your infrastructure matches the configuration.\n", plansummary.Counts{}, true},
		{"outputs only", "Changes to Outputs:\n  + x = 1\n\nYou can apply this plan...\n", plansummary.Counts{}, true},
		{"outputs and a counts line it cannot read", "Changes to Outputs:\n  + x = 1\nPlan: many to add\n", plansummary.Counts{}, false},
		{"nothing printed", "", plansummary.Counts{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := printedCounts(tt.text)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}
