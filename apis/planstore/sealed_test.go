package planstore

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSealedLoadsReadOnlyTheRecordedBundle: Inspect reads the bundle digest
// the controller records; the sealed loads return the plan JSON and text
// only while the stored bundle is that one. A bundle rewritten with the
// same ID and plan JSON but another text (or binary) is refused, though
// its own checksums and plan digest are consistent.
func TestSealedLoadsReadOnlyTheRecordedBundle(t *testing.T) {
	ctx := context.Background()
	secrets := reservedSecrets(textWorkspace, 4)
	in := textInput("plan-1", []byte("  # terraform_data.app will be created\n"))
	stored, err := Store(ctx, secrets, in)
	require.NoError(t, err)

	recorded, err := Inspect(ctx, secrets, textWorkspace, func(io.Reader) error { return nil })
	require.NoError(t, err)
	assert.Equal(t, stored.SHA256, recorded.SHA256)
	assert.Equal(t, stored.Size, recorded.Size)
	assert.Equal(t, "plan-1", recorded.ID)

	p, err := LoadTextSealed(ctx, secrets, textWorkspace, MaxTextBytes, recorded.SHA256)
	require.NoError(t, err)
	assert.Equal(t, in.Text, p.Text)
	p, err = LoadJSONSealed(ctx, secrets, textWorkspace, 1<<20, recorded.SHA256)
	require.NoError(t, err)
	assert.Equal(t, in.JSON, p.JSON)

	forged := in
	forged.Text = []byte("  No changes. Your infrastructure matches the configuration.\n")
	_, err = Store(ctx, secrets, forged)
	require.NoError(t, err)
	_, err = LoadText(ctx, secrets, textWorkspace, MaxTextBytes)
	require.NoError(t, err, "the forged bundle is consistent in itself")

	_, err = LoadTextSealed(ctx, secrets, textWorkspace, MaxTextBytes, recorded.SHA256)
	assert.ErrorIs(t, err, ErrCorrupt)
	assert.ErrorContains(t, err, "not the recorded "+recorded.SHA256)
	_, err = LoadJSONSealed(ctx, secrets, textWorkspace, 1<<20, recorded.SHA256)
	assert.ErrorIs(t, err, ErrCorrupt, "the JSON of a rewritten bundle is refused too")
	_, err = LoadJSONSealed(ctx, secrets, textWorkspace, 1<<20, "")
	assert.ErrorIs(t, err, ErrCorrupt, "a plan recorded without a bundle digest is not read as sealed")
}
