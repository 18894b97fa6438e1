package artifactdigest

import (
	"errors"
	"fmt"
	"hash"
	"io"
)

// ErrTooLarge is the error a Reader returns once it has read more than its
// limit.
var ErrTooLarge = errors.New("the artifact is larger than the limit")

// ErrMismatch marks an artifact read whole whose bytes do not have the
// expected digest.
var ErrMismatch = errors.New("digest mismatch")

// Reader reads an artifact through a hash of its expected digest's
// algorithm and refuses more than a limit: the one verified download of
// everything that reads an artifact (the runner, the artifact proxy, the
// controller's configuration reader).
type Reader struct {
	r    io.Reader
	want Digest
	h    hash.Hash
	max  int64
	n    int64
}

// NewReader reads r, expected to have digest want and at most max bytes
// (0: no limit).
func NewReader(r io.Reader, want Digest, max int64) *Reader {
	if max > 0 {
		r = io.LimitReader(r, max+1)
	}
	return &Reader{r: r, want: want, h: want.Hasher(), max: max}
}

// Read reads and hashes; past the limit it fails with ErrTooLarge.
func (v *Reader) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	if v.max > 0 && v.n > v.max {
		return n, fmt.Errorf("%w of %d bytes", ErrTooLarge, v.max)
	}
	return n, err
}

// Sum is the digest of what was read so far.
func (v *Reader) Sum() Digest { return v.want.Sum(v.h) }

// Verify reads what is left and checks that everything read has the
// expected digest (ErrMismatch if not).
func (v *Reader) Verify() error {
	if _, err := io.Copy(io.Discard, v); err != nil {
		return err
	}
	if got := v.Sum(); got != v.want {
		return fmt.Errorf("%w: the artifact has %s, its source says %s", ErrMismatch, got, v.want)
	}
	return nil
}
