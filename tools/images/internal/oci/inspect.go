package oci

import (
	"archive/tar"
	"errors"
	"io"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// File is one entry of an image's flattened file system.
type File struct {
	Header *tar.Header
	Data   []byte
}

// Files flattens img's layers and returns every entry by absolute path
// (/etc/passwd), as a container would see the file system.
func Files(img v1.Image) (map[string]File, error) {
	rc := mutate.Extract(img)
	defer rc.Close()
	files := map[string]File{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		files["/"+strings.TrimSuffix(strings.TrimPrefix(h.Name, "./"), "/")] = File{Header: h, Data: data}
	}
}
