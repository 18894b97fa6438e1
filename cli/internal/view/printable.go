package view

import (
	"io"
	"strings"
	"unicode/utf8"
)

// PrintableWriter passes to w what a terminal prints as text and drops
// what it would act on: C0 control characters other than newline and tab
// (ESC starts every escape sequence), DEL, and the C1 controls (U+0080 to
// U+009F, CSI and OSC among them). Everything the CLI prints goes through
// it: status messages, events, plan text and runner logs are written by
// tenants and by the configurations' code. JSON and YAML output is
// unaffected (both escape control characters inside strings).
type PrintableWriter struct {
	w io.Writer
	// pending holds the start of a UTF-8 sequence cut by the end of a
	// write, until the next write completes it.
	pending []byte
}

func NewPrintableWriter(w io.Writer) *PrintableWriter { return &PrintableWriter{w: w} }

// Write filters p and reports it all written.
func (pw *PrintableWriter) Write(p []byte) (int, error) {
	in := append(pw.pending, p...)
	pw.pending = nil
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); {
		c := in[i]
		if c < utf8.RuneSelf {
			if c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f) {
				out = append(out, c)
			}
			i++
			continue
		}
		if !utf8.FullRune(in[i:]) {
			pw.pending = append([]byte(nil), in[i:]...)
			break
		}
		r, size := utf8.DecodeRune(in[i:])
		if r < 0x80 || r > 0x9f {
			out = append(out, in[i:i+size]...)
		}
		i += size
	}
	if _, err := pw.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Printable is s without control characters other than newline and tab:
// text the runner writes may hold escape sequences.
func Printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || (r >= 0x20 && r != 0x7f && (r < 0x80 || r > 0x9f)) {
			return r
		}
		return -1
	}, s)
}
