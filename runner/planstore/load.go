package planstore

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// MaxUnpackedBytes bounds plan.json plus plan.bin once decompressed.
const MaxUnpackedBytes = 2 << 30

// Stat reads what the Workspace's stored plan is, from chunk 0 alone. It
// does not verify the chunks; Load does.
func Stat(ctx context.Context, g Getter, workspace string) (Meta, error) {
	s, err := getChunk(ctx, g, workspace, 0)
	if err != nil {
		return Meta{}, err
	}
	return metaOf(s)
}

// Load reads, verifies and unpacks the Workspace's stored plan. It returns
// an error wrapping ErrNotFound when there is none and ErrCorrupt when the
// chunks are missing, mixed with another plan's, or do not match chunk 0's
// checksums.
func Load(ctx context.Context, g Getter, workspace string) (*Plan, error) {
	first, err := getChunk(ctx, g, workspace, 0)
	if err != nil {
		return nil, err
	}
	meta, err := metaOf(first)
	if err != nil {
		return nil, err
	}
	var stream bytes.Buffer
	h := sha256.New()
	for i := 0; i < meta.Chunks; i++ {
		s := first
		if i > 0 {
			if s, err = getChunk(ctx, g, workspace, i); err != nil {
				if errors.Is(err, ErrNotFound) {
					return nil, fmt.Errorf("%w: chunk %d of %d is missing", ErrCorrupt, i, meta.Chunks)
				}
				return nil, err
			}
		}
		if s.Type != magosv1.PlanSecretType || s.Annotations[magosv1.PlanIDAnnotation] != meta.ID {
			return nil, fmt.Errorf("%w: chunk %d does not belong to plan %s", ErrCorrupt, i, meta.ID)
		}
		chunk := s.Data[magosv1.PlanChunkKey]
		stream.Write(chunk)
		h.Write(chunk)
	}
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); !sameSHA256(got, meta.SHA256) {
		return nil, fmt.Errorf("%w: the chunks have %s, chunk 0 says %s", ErrCorrupt, got, meta.SHA256)
	}
	meta.Size = int64(stream.Len())
	p := &Plan{Meta: meta}
	if p.JSON, p.Binary, err = unpack(&stream); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if got := Digest(p.JSON); got != meta.Digest {
		return nil, fmt.Errorf("%w: plan.json has digest %s, chunk 0 says %s", ErrCorrupt, got, meta.Digest)
	}
	return p, nil
}

// getChunk reads chunk i; a missing Secret is ErrNotFound.
func getChunk(ctx context.Context, g Getter, workspace string, i int) (*corev1.Secret, error) {
	name := magosv1.PlanSecretName(workspace, i)
	s, err := g.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%w: Secret %s not found", ErrNotFound, name)
	}
	if err != nil {
		return nil, fmt.Errorf("reading plan Secret %s: %w", name, err)
	}
	return s, nil
}

// metaOf reads chunk 0's annotations. A chunk reserved by the controller
// and never written holds no plan.
func metaOf(s *corev1.Secret) (Meta, error) {
	a := s.Annotations
	if len(s.Data) == 0 && a[magosv1.PlanIDAnnotation] == "" && s.Type == magosv1.PlanSecretType {
		return Meta{}, fmt.Errorf("%w: Secret %s is reserved but holds no plan yet", ErrNotFound, s.Name)
	}
	m := Meta{
		ID:     a[magosv1.PlanIDAnnotation],
		Digest: a[magosv1.PlanDigestAnnotation],
		SHA256: a[magosv1.PlanSHA256Annotation],
	}
	n, err := strconv.Atoi(a[magosv1.PlanChunksAnnotation])
	switch {
	case s.Type != magosv1.PlanSecretType:
		return Meta{}, fmt.Errorf("%w: Secret %s has type %q, not %q", ErrCorrupt, s.Name, s.Type, magosv1.PlanSecretType)
	case err != nil || n < 1 || n > magosv1.MaxPlanChunks:
		return Meta{}, fmt.Errorf("%w: Secret %s has no valid %s annotation", ErrCorrupt, s.Name, magosv1.PlanChunksAnnotation)
	case m.ID == "" || m.Digest == "" || m.SHA256 == "":
		return Meta{}, fmt.Errorf("%w: Secret %s lacks the plan ID, digest or sha256 annotation", ErrCorrupt, s.Name)
	}
	m.Chunks = n
	return m, nil
}

// sameSHA256 compares digests written with or without the "sha256:" prefix.
func sameSHA256(a, b string) bool {
	return strings.TrimPrefix(a, "sha256:") == strings.TrimPrefix(b, "sha256:")
}

// unpack reads plan.json and plan.bin from gzip(tar) and refuses anything else.
func unpack(r io.Reader) (planJSON, planBin []byte, err error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, nil, err
	}
	defer gz.Close()
	tr := tar.NewReader(io.LimitReader(gz, MaxUnpackedBytes))
	files := map[string][]byte{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		if hdr.Typeflag != tar.TypeReg || (hdr.Name != magosv1.PlanJSONFile && hdr.Name != magosv1.PlanBinaryFile) {
			return nil, nil, fmt.Errorf("unexpected entry %q in the plan archive", hdr.Name)
		}
		if _, dup := files[hdr.Name]; dup {
			return nil, nil, fmt.Errorf("duplicate entry %q in the plan archive", hdr.Name)
		}
		if hdr.Size < 0 || hdr.Size > MaxUnpackedBytes {
			return nil, nil, fmt.Errorf("entry %q is too large", hdr.Name)
		}
		buf := bytes.NewBuffer(make([]byte, 0, min(hdr.Size, 64<<20)))
		if _, err := io.Copy(buf, tr); err != nil {
			return nil, nil, err
		}
		files[hdr.Name] = buf.Bytes()
	}
	var ok1, ok2 bool
	planJSON, ok1 = files[magosv1.PlanJSONFile]
	planBin, ok2 = files[magosv1.PlanBinaryFile]
	if !ok1 || !ok2 {
		return nil, nil, errors.New("the plan archive lacks plan.json or plan.bin")
	}
	return planJSON, planBin, nil
}
