package statebackend_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/runner/internal/statebackend"
)

// TestGetStateRefusesAStateBomb pins that a state Secret which fits in a
// Secret but unpacks to more than MaxStateBytes is refused, not read whole
// into the runner's memory.
func TestGetStateRefusesAStateBomb(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	store, cs, ns := newUnreservedStore(t)
	var bomb bytes.Buffer
	zw, err := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	require.NoError(t, err)
	_, err = io.CopyN(zw, zeros{}, statebackend.MaxStateBytes+1)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.Less(t, bomb.Len(), 1<<20, "the bomb fits in one Secret")
	_, err = cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: store.StateSecret},
		Data:       map[string][]byte{magosv1.StateKey: bomb.Bytes()},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	state, err := store.GetState(ctx)
	require.ErrorContains(t, err, "unpacks to more than")
	require.Nil(t, state)
}

// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
