package mask

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestString(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		in     string
		want   string
	}{
		{name: "no secrets", values: nil, in: "hello", want: "hello"},
		{name: "one occurrence", values: []string{"s3cr3t"}, in: "pw=s3cr3t;", want: "pw=(sensitive value);"},
		{name: "many occurrences", values: []string{"abcd"}, in: "abcdxabcd", want: "(sensitive value)x(sensitive value)"},
		{name: "the shortest masked value", values: []string{"pin4"}, in: "pin=pin4", want: "pin=(sensitive value)"},
		// "1" or "on" would be replaced everywhere, showing where they occur.
		{name: "values shorter than MinLen are not masked", values: []string{"1", "on", "abc"}, in: "10 runs on abc", want: "10 runs on abc"},
		{name: "longest value wins", values: []string{"secret", "secret-long"}, in: "x secret-long y", want: "x (sensitive value) y"},
		{name: "empty and blank values are ignored", values: []string{"", "  "}, in: "a  b", want: "a  b"},
		{name: "json-escaped form", values: []string{`a"b\c`}, in: `v = "a\"b\\c"`, want: `v = "(sensitive value)"`},
		{
			name:   "lines of a multi-line value",
			values: []string{"-----BEGIN KEY-----\nAAAABBBBCCCC\n-----END KEY-----"},
			in:     "key = <<EOT\n    AAAABBBBCCCC\nEOT",
			want:   "key = <<EOT\n    (sensitive value)\nEOT",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, New(tt.values...).String(tt.in))
		})
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{"A": "alpha-value", "B": "beta-value", "C": "not-listed"}
	m := FromEnv(" A,,B ", func(k string) string { return env[k] })
	assert.Equal(t, "(sensitive value) (sensitive value) not-listed", m.String("alpha-value beta-value not-listed"))
	assert.Equal(t, "x (sensitive value)", m.With("extra-1").String("x extra-1"))
}

func TestWriterMasksAcrossSplitWrites(t *testing.T) {
	secret := "TOP-SECRET-VALUE"
	multi := "line-one-secret\nline-two-secret"
	stream := "start\nvalue is TOP-SECRET-VALUE here\npartial TOP-SECRET-VALUE" +
		"\nand line-one-secret\nline-two-secret end\nno newline at the end TOP-SECRET-VALUE"
	for _, values := range [][]string{{secret}, {secret, multi}} {
		want := New(values...).String(stream)
		require.NotContains(t, want, secret)
		// Split the stream at every possible chunk size, so that each
		// secret is cut at every offset by some run.
		for size := 1; size <= len(stream); size++ {
			var out bytes.Buffer
			w := New(values...).NewWriter(&out)
			for i := 0; i < len(stream); i += size {
				n, err := w.Write([]byte(stream[i:min(i+size, len(stream))]))
				require.NoError(t, err)
				require.Equal(t, min(size, len(stream)-i), n)
			}
			require.NoError(t, w.Close())
			require.Equal(t, want, out.String(), "chunk size %d, values %q", size, values)
		}
	}
}

func TestWriterPassesCompleteLinesAtOnce(t *testing.T) {
	var out bytes.Buffer
	w := New("a-long-secret-value").NewWriter(&out)
	_, err := w.Write([]byte("first line\nsecond "))
	require.NoError(t, err)
	// The complete line is out; of the partial line, only what cannot be the
	// start of a secret is.
	assert.True(t, strings.HasPrefix(out.String(), "first line\n"))
	_, err = w.Write([]byte("line\n"))
	require.NoError(t, err)
	assert.Equal(t, "first line\nsecond line\n", out.String())
}

// A secret the run learns later (the state backend's password) is masked
// from then on, also in a line that was already partly written.
func TestWriterAddMasksLaterSecrets(t *testing.T) {
	var out bytes.Buffer
	w := New("first-secret").NewWriter(&out)
	_, err := w.Write([]byte("first-secret before\npassword="))
	require.NoError(t, err)
	w.Add("late-password")
	_, err = w.Write([]byte("late-password\n"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	assert.Equal(t, "(sensitive value) before\npassword=(sensitive value)\n", out.String())
}

func TestTooShortIn(t *testing.T) {
	env := map[string]string{"A": "abc", "B": "long-enough", "C": ""}
	assert.Equal(t, []string{"A"}, TooShortIn("A,B,C,D", func(k string) string { return env[k] }))
}

func TestWriterWithoutSecretsIsTransparent(t *testing.T) {
	var out bytes.Buffer
	w := New().NewWriter(&out)
	_, err := w.Write([]byte("partial"))
	require.NoError(t, err)
	assert.Equal(t, "partial", out.String())
	require.NoError(t, w.Close())
}
