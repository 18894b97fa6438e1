package planstore

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func BenchmarkPack50MB(b *testing.B) {
	r := rand.NewChaCha8([32]byte{2})
	bin := make([]byte, 40<<20)
	_, _ = r.Read(bin)
	planJSON := bytes.Repeat([]byte(`{"address":"terraform_data.x","change":{"actions":["create"]}},`), (10<<20)/64)
	b.SetBytes(int64(len(bin) + len(planJSON)))
	for b.Loop() {
		s, err := pack(planJSON, nil, bin)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, _, err := unpack(bytes.NewReader(s), MaxUnpackedBytes); err != nil {
			b.Fatal(err)
		}
	}
}
