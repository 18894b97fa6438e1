package realnode

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"runtime"
	"time"
)

// ImageFile is one file of an image built with WriteImage.
type ImageFile struct {
	// Path is absolute inside the image, e.g. /probe.
	Path string
	Mode int64
	Data []byte
}

// WriteImage writes a one-layer OCI image archive (what
// `ctr images import` reads) named name, holding files, run as user with
// entrypoint. The harness uses it for images of its own test programs.
func WriteImage(file, name, user string, entrypoint []string, files []ImageFile) error {
	layer, diffID, err := imageLayer(files)
	if err != nil {
		return err
	}
	cfg, err := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"config":       map[string]any{"Entrypoint": entrypoint, "User": user},
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{diffID}},
	})
	if err != nil {
		return err
	}
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        descriptor("application/vnd.oci.image.config.v1+json", cfg),
		"layers":        []any{descriptor("application/vnd.oci.image.layer.v1.tar+gzip", layer)},
	})
	if err != nil {
		return err
	}
	md := descriptor("application/vnd.oci.image.manifest.v1+json", manifest)
	md["platform"] = map[string]string{"architecture": runtime.GOARCH, "os": "linux"}
	md["annotations"] = map[string]string{"io.containerd.image.name": name}
	index, err := json.Marshal(map[string]any{"schemaVersion": 2, "manifests": []any{md}})
	if err != nil {
		return err
	}
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	entries := []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", index},
		{blobPath(layer), layer},
		{blobPath(cfg), cfg},
		{blobPath(manifest), manifest},
	}
	for _, e := range entries {
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.data)), ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return os.WriteFile(file, out.Bytes(), 0o644)
}

// imageLayer returns the gzip'd tar of files (with their parent
// directories) and the digest of the uncompressed tar.
func imageLayer(files []ImageFile) ([]byte, string, error) {
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	dirs := map[string]bool{}
	for _, f := range files {
		var parents []string
		for d := path.Dir(f.Path); d != "/" && !dirs[d]; d = path.Dir(d) {
			parents = append([]string{d}, parents...)
			dirs[d] = true
		}
		for _, d := range parents {
			if err := tw.WriteHeader(&tar.Header{Name: d[1:] + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: time.Unix(0, 0)}); err != nil {
				return nil, "", err
			}
		}
		if err := tw.WriteHeader(&tar.Header{Name: f.Path[1:], Mode: f.Mode, Size: int64(len(f.Data)), ModTime: time.Unix(0, 0)}); err != nil {
			return nil, "", err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, "", err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, "", err
	}
	diffID := fmt.Sprintf("sha256:%x", sha256.Sum256(raw.Bytes()))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return nil, "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	return gz.Bytes(), diffID, nil
}

func descriptor(mediaType string, blob []byte) map[string]any {
	return map[string]any{"mediaType": mediaType, "digest": fmt.Sprintf("sha256:%x", sha256.Sum256(blob)), "size": len(blob)}
}

func blobPath(blob []byte) string { return fmt.Sprintf("blobs/sha256/%x", sha256.Sum256(blob)) }

// ImportImage imports an OCI image archive into the node's containerd, in
// the namespace the kubelet uses, so Pods run it with no registry.
func (n *Node) ImportImage(ctx context.Context, archive string) error {
	return run(ctx, "ctr", "--address", n.socket(), "--namespace", "k8s.io", "images", "import", archive)
}
