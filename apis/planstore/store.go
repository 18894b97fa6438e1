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
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// Store writes in as the Workspace's stored plan, replacing any earlier one,
// and returns what it wrote. It writes into the chunk Secrets the
// workspace-controller reserved (see EmptyChunk) and creates none: when the
// plan needs more than are reserved, it writes nothing and returns a
// *NotReservedError saying how many it needs.
func Store(ctx context.Context, w Writer, in Input) (Meta, error) {
	if len(in.Text) > MaxTextBytes {
		return Meta{}, fmt.Errorf("%w: the plan text has %d bytes, more than the %d a bundle may hold", ErrTooLarge, len(in.Text), MaxTextBytes)
	}
	stream, err := pack(in.JSON, in.Text, in.Binary)
	if err != nil {
		return Meta{}, err
	}
	n := (len(stream) + magosv1.PlanChunkBytes - 1) / magosv1.PlanChunkBytes
	if n > magosv1.MaxPlanChunks {
		return Meta{}, fmt.Errorf("%w: %d bytes compressed need %d Secrets of %d bytes, more than %d",
			ErrTooLarge, len(stream), n, magosv1.PlanChunkBytes, magosv1.MaxPlanChunks)
	}
	sum := sha256.Sum256(stream)
	meta := Meta{
		ID:     in.ID,
		Digest: Digest(in.JSON),
		SHA256: "sha256:" + hex.EncodeToString(sum[:]),
		Chunks: n,
		Size:   int64(len(stream)),
	}
	// Check the reservation before writing anything, so that a plan too big
	// for it leaves the stored plan as it was.
	old, err := reserved(ctx, w, in.Workspace, n)
	if err != nil {
		return Meta{}, err
	}
	// Chunk 0 last: until it is written, chunk 0 still describes the old
	// plan, whose checksum the new chunks do not match.
	// One at a time: on a small control plane, writing chunks in parallel
	// was slower (etcd and the apiserver are CPU-bound on them).
	for i := 1; i < n; i++ {
		if err := put(ctx, w, chunkSecret(in, meta, i, chunkOf(stream, i)), n); err != nil {
			return Meta{}, err
		}
	}
	if err := put(ctx, w, chunkSecret(in, meta, 0, chunkOf(stream, 0)), n); err != nil {
		return Meta{}, err
	}
	// Chunks beyond n held the earlier, bigger plan: empty them (the
	// runner cannot delete and create them again).
	for i := n; i < old; i++ {
		err := put(ctx, w, EmptyChunk(in.Workspace, i, in.Owner), n)
		if errors.Is(err, ErrNotReserved) {
			break
		}
		if err != nil {
			return Meta{}, fmt.Errorf("emptying leftover plan chunk %d: %w", i, err)
		}
	}
	return meta, nil
}

// reserved checks that chunks 0 and n-1 exist and returns how many chunks
// the plan stored now has (0 when none is).
func reserved(ctx context.Context, w Writer, workspace string, n int) (int, error) {
	first, err := w.Get(ctx, magosv1.PlanSecretName(workspace, 0), metav1.GetOptions{})
	if err == nil && n > 1 {
		_, err = w.Get(ctx, magosv1.PlanSecretName(workspace, n-1), metav1.GetOptions{})
	}
	// The runner's Role names only the reserved chunks: one beyond them is
	// Forbidden rather than NotFound.
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		return 0, &NotReservedError{Chunks: n}
	}
	if err != nil {
		return 0, fmt.Errorf("reading the plan Secrets: %w", err)
	}
	old, _ := strconv.Atoi(first.Annotations[magosv1.PlanChunksAnnotation])
	return min(max(old, 0), magosv1.MaxPlanChunks), nil
}

// EmptyChunk is chunk i as the workspace-controller reserves it before a
// plan runs: of the plan Secret type, labelled, owned by the Workspace and
// empty.
func EmptyChunk(workspace string, i int, owner metav1.OwnerReference) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: magosv1.PlanSecretName(workspace, i),
			Labels: map[string]string{
				magosv1.WorkspaceLabel: workspace,
				magosv1.ManagedByLabel: magosv1.ManagedByValue,
			},
			OwnerReferences: []metav1.OwnerReference{owner},
		},
		Type: magosv1.PlanSecretType,
	}
}

func chunkOf(stream []byte, i int) []byte {
	start := i * magosv1.PlanChunkBytes
	return stream[start:min(start+magosv1.PlanChunkBytes, len(stream))]
}

// chunkSecret is the Secret holding chunk i.
func chunkSecret(in Input, meta Meta, i int, chunk []byte) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: magosv1.PlanSecretName(in.Workspace, i),
			Labels: map[string]string{
				magosv1.WorkspaceLabel: in.Workspace,
				magosv1.PlanIDLabel:    in.ID,
				magosv1.ManagedByLabel: magosv1.ManagedByValue,
			},
			Annotations:     map[string]string{magosv1.PlanIDAnnotation: in.ID},
			OwnerReferences: []metav1.OwnerReference{in.Owner},
		},
		Type: magosv1.PlanSecretType,
		Data: map[string][]byte{magosv1.PlanChunkKey: chunk},
	}
	if i == 0 {
		s.Annotations[magosv1.PlanChunksAnnotation] = strconv.Itoa(meta.Chunks)
		s.Annotations[magosv1.PlanSHA256Annotation] = meta.SHA256
		s.Annotations[magosv1.PlanDigestAnnotation] = meta.Digest
	}
	return s
}

// put replaces s whole; it must exist. Secrets allow unconditional
// updates, so no read is needed first. n is how many chunks the plan
// needs, for the error when s is missing.
func put(ctx context.Context, w Writer, s *corev1.Secret, n int) error {
	_, err := w.Update(ctx, s, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		return &NotReservedError{Chunks: n, Name: s.Name}
	}
	if err != nil {
		return fmt.Errorf("writing plan Secret %s: %w", s.Name, err)
	}
	return nil
}

// pack returns gzip(tar{plan.json, plan.txt, plan.bin}), without plan.txt
// when planText is empty. The JSON comes first and the text second so a
// reader that only needs them can stop before the binary; headers carry no
// owner or time, so the same plan packs to the same bytes.
func pack(planJSON, planText, planBin []byte) ([]byte, error) {
	type file struct {
		name string
		data []byte
	}
	files := []file{{magosv1.PlanJSONFile, planJSON}}
	if len(planText) > 0 {
		files = append(files, file{magosv1.PlanTextFile, planText})
	}
	files = append(files, file{magosv1.PlanBinaryFile, planBin})
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		hdr := &tar.Header{Name: f.name, Typeflag: tar.TypeReg, Mode: 0o600, Size: int64(len(f.data)), Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
