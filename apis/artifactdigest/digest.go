// Package artifactdigest checks Flux artifact digests, "<algorithm>:<hex>",
// in each algorithm source-controller may write them with
// (--artifact-digest-algo): sha256 (its default), sha384, sha512 and
// blake3.
package artifactdigest

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"

	"github.com/zeebo/blake3"
)

// algorithms are the supported algorithms and the hex length of their
// digests.
var algorithms = map[string]struct {
	new    func() hash.Hash
	hexLen int
}{
	"sha256": {sha256.New, 64},
	"sha384": {sha512.New384, 96},
	"sha512": {sha512.New, 128},
	"blake3": {func() hash.Hash { return blake3.New() }, 64},
}

// Digest is a parsed artifact digest.
type Digest struct {
	// Algorithm is the digest's algorithm, e.g. "sha256".
	Algorithm string
	// Hex is the digest's value, lower-case hex.
	Hex string
}

// Parse parses s, "<algorithm>:<hex>" in a supported algorithm.
func Parse(s string) (Digest, error) {
	algo, value, ok := strings.Cut(s, ":")
	a, known := algorithms[algo]
	if !ok || !known {
		return Digest{}, fmt.Errorf("unsupported digest %q: want sha256, sha384, sha512 or blake3:<hex>", s)
	}
	if len(value) != a.hexLen || strings.ToLower(value) != value {
		return Digest{}, fmt.Errorf("digest %q: want %d lower-case hex digits", s, a.hexLen)
	}
	if _, err := hex.DecodeString(value); err != nil {
		return Digest{}, fmt.Errorf("digest %q: %w", s, err)
	}
	return Digest{Algorithm: algo, Hex: value}, nil
}

// Supported reports whether algo is a supported algorithm.
func Supported(algo string) bool {
	_, ok := algorithms[algo]
	return ok
}

// Valid reports whether s parses.
func Valid(s string) bool {
	_, err := Parse(s)
	return err == nil
}

// String is the digest as Flux writes it.
func (d Digest) String() string { return d.Algorithm + ":" + d.Hex }

// Hasher returns a new hash of d's algorithm, for Sum.
func (d Digest) Hasher() hash.Hash { return algorithms[d.Algorithm].new() }

// Sum is the digest, in d's algorithm, of what h has hashed.
func (d Digest) Sum(h hash.Hash) Digest {
	return Digest{Algorithm: d.Algorithm, Hex: hex.EncodeToString(h.Sum(nil))}
}

// Of is the digest of data in algorithm algo (which must be supported).
func Of(algo string, data []byte) string {
	h := algorithms[algo].new()
	h.Write(data)
	return algo + ":" + hex.EncodeToString(h.Sum(nil))
}
