package planstore_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
)

// BenchmarkStoreLoad50MB stores and loads a 50 MB plan against the real
// apiserver: 10 MB of plan JSON (compressible) and 40 MB of incompressible
// binary plan, about 55 chunks.
func BenchmarkStoreLoad50MB(b *testing.B) {
	ctx := context.Background()
	ns := env.NewNamespace(b)
	secrets := clientset(b).CoreV1().Secrets(ns)
	reserve(b, secrets, magosv1.MaxPlanChunks)
	r := rand.NewChaCha8([32]byte{2})
	bin := make([]byte, 40<<20)
	_, _ = r.Read(bin)
	planJSON := make([]byte, 0, 10<<20)
	planJSON = append(planJSON, `{"format_version":"1.2","resource_changes":[`...)
	for len(planJSON) < 10<<20-200 {
		planJSON = append(planJSON, `{"address":"terraform_data.x","change":{"actions":["create"]}},`...)
	}
	planJSON = append(planJSON, `{}]}`...)
	size := int64(len(bin) + len(planJSON))
	b.Run("Store", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			meta, err := planstore.Store(ctx, secrets, input("bench", planJSON, bin))
			require.NoError(b, err)
			b.ReportMetric(float64(meta.Chunks), "chunks")
		}
	})
	b.Run("Load", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			p, err := planstore.Load(ctx, secrets, workspace)
			require.NoError(b, err)
			require.Len(b, p.Binary, len(bin))
		}
	})
}
