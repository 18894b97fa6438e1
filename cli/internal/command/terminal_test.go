package command

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func TestPrintableWriter(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"text", "Plan: 1 to add.\n\ttab\n", "Plan: 1 to add.\n\ttab\n"},
		{"an escape sequence", "a\x1b[2Jb\x1b]0;title\x07c", "a[2Jb]0;titlec"},
		{"carriage return and backspace", "ok\rpwned\b\x7f", "okpwned"},
		{"C1 controls", "x\u009b31my\u009dz", "x31myz"},
		{"other UTF-8", "ünïcödé ✓ 日本", "ünïcödé ✓ 日本"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			n, err := newPrintableWriter(&b).Write([]byte(tc.in))
			assert.NoError(t, err)
			assert.Equal(t, len(tc.in), n)
			assert.Equal(t, tc.want, b.String())
		})
	}
	t.Run("a sequence cut between writes", func(t *testing.T) {
		var b bytes.Buffer
		w := newPrintableWriter(&b)
		csi := []byte("\u009b")
		check := []byte("✓")
		for _, part := range [][]byte{[]byte("a"), csi[:1], csi[1:], check[:2], check[2:], []byte("b")} {
			_, err := w.Write(part)
			assert.NoError(t, err)
		}
		assert.Equal(t, "a✓b", b.String())
	})
}

// What a user passes back to the CLI, an object's name in an error
// message, is printed without the sequences a terminal would act on.
func TestRunPrintsNoEscapeSequences(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Run(context.Background(), []string{"get", "--\x1b]0;pwned\x07\x1b[2J"}, genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut.String(), "unknown flag")
	assert.NotContains(t, errOut.String(), "\x1b")
	assert.NotContains(t, errOut.String(), "\x07")
}
