package artifactdigest

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseAndSum(t *testing.T) {
	data := []byte("hello")
	for algo, want := range map[string]string{
		// Known answers: sha256sum, sha384sum, sha512sum and b3sum of "hello".
		"sha256": "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
		"sha384": "59e1748777448c69de6b800d7a33bbfb9ff1b463e44354c3553bcdb9c666fa90125a3c79f90397bdf5f6a13de828684f",
		"sha512": "9b71d224bd62f3785d96d46ad3ea3d73319bfbc2890caadae2dff72519673ca72323c3d99ba5c11d7c7acc6e14b8c5da0c4663475c2e5c3adef46f73bcdec043",
		"blake3": "ea8f163db38682925e4491c5e58d4bb3506ef8c14eb78a86e908c5624a67200f",
	} {
		t.Run(algo, func(t *testing.T) {
			got := Of(algo, data)
			assert.Equal(t, algo+":"+want, got)
			d, err := Parse(got)
			require.NoError(t, err)
			h := d.Hasher()
			h.Write(data)
			assert.Equal(t, d, d.Sum(h))
		})
	}
	for _, bad := range []string{"", "sha256", "md5:00", "sha256:abc", "sha256:" + string(make([]byte, 64)),
		"SHA256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
		"sha256:2CF24DBA5FB0A30E26E83B2AC5B9E29E1B161E5C1FA7425E73043362938B9824"} {
		assert.False(t, Valid(bad), "%q", bad)
	}
}

func TestReader(t *testing.T) {
	data := []byte("an artifact")
	want, err := Parse(Of("sha256", data))
	require.NoError(t, err)
	t.Run("the artifact whole, within the limit, verifies", func(t *testing.T) {
		r := NewReader(bytes.NewReader(data), want, int64(len(data)))
		_, err := io.CopyN(io.Discard, r, 3)
		require.NoError(t, err)
		assert.NoError(t, r.Verify())
	})
	t.Run("one byte over the limit is refused", func(t *testing.T) {
		r := NewReader(bytes.NewReader(data), want, int64(len(data))-1)
		_, err := io.Copy(io.Discard, r)
		assert.ErrorIs(t, err, ErrTooLarge)
	})
	t.Run("other bytes do not verify", func(t *testing.T) {
		r := NewReader(bytes.NewReader([]byte("another one")), want, 0)
		assert.ErrorIs(t, r.Verify(), ErrMismatch)
	})
}
