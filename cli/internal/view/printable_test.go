package view

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
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
			n, err := NewPrintableWriter(&b).Write([]byte(tc.in))
			assert.NoError(t, err)
			assert.Equal(t, len(tc.in), n)
			assert.Equal(t, tc.want, b.String())
		})
	}
	t.Run("a sequence cut between writes", func(t *testing.T) {
		var b bytes.Buffer
		w := NewPrintableWriter(&b)
		csi := []byte("\u009b")
		check := []byte("✓")
		for _, part := range [][]byte{[]byte("a"), csi[:1], csi[1:], check[:2], check[2:], []byte("b")} {
			_, err := w.Write(part)
			assert.NoError(t, err)
		}
		assert.Equal(t, "a✓b", b.String())
	})
}

func TestPrintableDropsControlCharacters(t *testing.T) {
	assert.Equal(t, "a\tb\n[1mc", Printable("a\tb\n\x1b[1mc\x07\u009b"))
}
