package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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

// benchFiles and benchSize shape the benchmarked configuration: 2,000
// files, 64 MB unpacked.
const benchFiles, benchSize = 2000, 64 << 20

// benchDirs are where the benchmarks extract: the test's temporary
// directory ("tempdir", a disk on most machines) and, where there is one,
// /dev/shm ("devshm", memory), which shows the runner's own cost without
// the disk's.
func benchDirs(b *testing.B) map[string]string {
	dirs := map[string]string{"tempdir": b.TempDir()}
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		shm, err := os.MkdirTemp("/dev/shm", "magos-bench-")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = os.RemoveAll(shm) })
		dirs["devshm"] = shm
	}
	return dirs
}

// fetchTargetMBps is how fast fetch+verify+extract should unpack (MB/s).
const fetchTargetMBps = 200

// BenchmarkFetchVerifyExtract measures the runner's artifact path over
// loopback HTTP: download, sha256 check and safe extraction of a 2,000-file,
// 64 MB (unpacked) configuration. MB/s is of unpacked bytes. Compare it with
// BenchmarkWriteTree on the same directory: that is what the filesystem
// takes to create the same files with nothing to download or unpack. The
// target is fetchTargetMBps.
func BenchmarkFetchVerifyExtract(b *testing.B) {
	data := benchArchive(b, benchFiles, benchSize)
	sum := sha256.Sum256(data)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(data) }))
	defer srv.Close()

	for where, base := range benchDirs(b) {
		b.Run(where, func(b *testing.B) {
			b.SetBytes(benchSize)
			for i := range b.N {
				root := filepath.Join(base, fmt.Sprint(i))
				if err := FetchAndExtract(context.Background(), DefaultFetcher(), srv.URL+"/a.tar.gz", digest, root, DefaultLimits()); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				_ = os.RemoveAll(root)
				b.StartTimer()
			}
			b.ReportMetric(float64(len(data))/(1<<20), "archive-MB")
			b.ReportMetric(fetchTargetMBps, "target-MB/s")
		})
	}
}

// BenchmarkWriteTree writes the files of BenchmarkFetchVerifyExtract's
// archive straight from memory, one after the other: the filesystem's own
// cost of the tree.
func BenchmarkWriteTree(b *testing.B) {
	data := benchArchive(b, benchFiles, benchSize)
	type file struct {
		name string
		body []byte
	}
	var files []file
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err != nil {
			break
		}
		body, _ := io.ReadAll(tr)
		files = append(files, file{hdr.Name, body})
	}
	for where, base := range benchDirs(b) {
		b.Run(where, func(b *testing.B) {
			b.SetBytes(benchSize)
			for i := range b.N {
				root := filepath.Join(base, fmt.Sprint(i))
				for _, f := range files {
					p := filepath.Join(root, filepath.FromSlash(f.name))
					if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
						b.Fatal(err)
					}
					if err := os.WriteFile(p, f.body, 0o644); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				_ = os.RemoveAll(root)
				b.StartTimer()
			}
		})
	}
}
