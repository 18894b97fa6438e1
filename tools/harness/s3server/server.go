// Package s3server serves an S3-compatible object store (gofakes3, in
// memory) for tests: a Flux Bucket source's endpoint.
package s3server

import (
	"bytes"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Server is an in-memory S3 endpoint.
type Server struct {
	backend *s3mem.Backend
	srv     *http.Server
}

// Serve serves the store on l until Close.
func Serve(l net.Listener) *Server {
	s := &Server{backend: s3mem.New()}
	s.srv = &http.Server{Handler: gofakes3.New(s.backend).Server(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(l) }()
	return s
}

// Close stops serving.
func (s *Server) Close() error { return s.srv.Close() }

// Sync makes bucket hold exactly the regular files under dir, each under
// its slash path relative to dir, creating the bucket if needed.
func (s *Server) Sync(bucket, dir string) error {
	if err := s.backend.CreateBucket(bucket); err != nil && !gofakes3.HasErrorCode(err, gofakes3.ErrBucketAlreadyExists) {
		return err
	}
	want := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		want[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		return err
	}
	list, err := s.backend.ListBucket(bucket, nil, gofakes3.ListBucketPage{})
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range list.Contents {
		if _, keep := want[o.Key]; !keep {
			_, err := s.backend.DeleteObject(bucket, o.Key)
			errs = append(errs, err)
		}
	}
	// What gofakes3's own PUT records, and S3 clients expect back.
	meta := map[string]string{"Last-Modified": time.Now().UTC().Format(http.TimeFormat)}
	for key, b := range want {
		_, err := s.backend.PutObject(bucket, key, meta, bytes.NewReader(b), int64(len(b)), nil)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
