package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
)

// benchArchive builds a tar.gz of files totalling about size bytes: text
// that compresses like Terraform configurations do.
func benchArchive(b *testing.B, files, size int) []byte {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"resource", "terraform_data", "variable", "output", "input", "=", "{", "}", "count", "module", "source", "\n"}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	per := size / files
	for i := range files {
		var body bytes.Buffer
		for body.Len() < per {
			body.WriteString(words[rng.IntN(len(words))])
			body.WriteByte(' ')
		}
		hdr := &tar.Header{Name: fmt.Sprintf("modules/m%03d/file%04d.tf", i%100, i), Mode: 0o644, Size: int64(body.Len()), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			b.Fatal(err)
		}
		if _, err := tw.Write(body.Bytes()); err != nil {
			b.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		b.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkFetchVerifyExtract measures the runner's artifact path over
// loopback HTTP: download, sha256 check and safe extraction of a 2,000-file,
// 64 MB (unpacked) configuration. MB/s is of unpacked bytes.
func BenchmarkFetchVerifyExtract(b *testing.B) {
	const files, size = 2000, 64 << 20
	data := benchArchive(b, files, size)
	sum := sha256.Sum256(data)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(data) }))
	defer srv.Close()

	b.SetBytes(size)
	b.ResetTimer()
	for range b.N {
		if err := FetchAndExtract(context.Background(), DefaultFetcher(), srv.URL+"/a.tar.gz", digest, b.TempDir(), DefaultLimits()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(data))/(1<<20), "archive-MB")
}
