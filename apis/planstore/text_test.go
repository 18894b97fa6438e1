package planstore

import (
	"bytes"
	"context"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

const textWorkspace = "web"

func textInput(id string, text []byte) Input {
	return Input{
		Workspace: textWorkspace,
		Owner:     WorkspaceOwner(textWorkspace, "2c7a3c86-2f0f-4d43-9c1e-0d8a9f0c1a11"),
		ID:        id,
		JSON:      []byte(`{"format_version":"1.2","resource_changes":[{"address":"terraform_data.app"}]}`),
		Binary:    []byte("binary plan"),
		Text:      text,
	}
}

// TestPlanTextRoundTrip: plan.txt stored with a plan comes back from Load
// and LoadText, and LoadText stops before plan.bin.
func TestPlanTextRoundTrip(t *testing.T) {
	ctx := context.Background()
	secrets := reservedSecrets(textWorkspace, 4)
	text := []byte("OpenTofu will perform the following actions:\n\n  # terraform_data.app will be created\n")
	// An incompressible plan.bin of three chunks, after the text.
	bin := make([]byte, 3*magosv1.PlanChunkBytes)
	_, _ = rand.NewChaCha8([32]byte{3}).Read(bin)
	in := textInput("plan-1", text)
	in.Binary = bin
	meta, err := Store(ctx, secrets, in)
	require.NoError(t, err)
	require.Equal(t, 4, meta.Chunks)

	full, err := Load(ctx, secrets, textWorkspace)
	require.NoError(t, err)
	assert.Equal(t, text, full.Text)
	assert.Equal(t, in.JSON, full.JSON)
	assert.Equal(t, bin, full.Binary)
	assert.Equal(t, meta.Digest, full.Digest, "the text does not change the plan digest")
	assert.Equal(t, Digest(in.JSON), full.Digest)

	secrets.reads = nil
	p, err := LoadText(ctx, secrets, textWorkspace, MaxTextBytes)
	require.NoError(t, err)
	assert.Equal(t, text, p.Text)
	assert.Equal(t, "plan-1", p.ID)
	assert.Equal(t, meta.Digest, p.Digest)
	assert.Nil(t, p.JSON)
	assert.Nil(t, p.Binary)
	assert.Equal(t, []string{"web-plan-00"}, secrets.reads, "chunks past plan.txt are not read")

	j, err := LoadJSON(ctx, secrets, textWorkspace, 1<<20)
	require.NoError(t, err, "the policy gate reads a bundle with a text")
	assert.Equal(t, in.JSON, j.JSON)
}

// TestPlanWithoutTextStillLoads: a bundle stored without plan.txt (by an
// earlier runner) loads as before, and LoadText says it has no text.
func TestPlanWithoutTextStillLoads(t *testing.T) {
	ctx := context.Background()
	secrets := reservedSecrets(textWorkspace, 1)
	in := textInput("plan-1", nil)
	_, err := Store(ctx, secrets, in)
	require.NoError(t, err)

	p, err := Load(ctx, secrets, textWorkspace)
	require.NoError(t, err)
	assert.Nil(t, p.Text)
	assert.Equal(t, in.Binary, p.Binary)

	_, err = LoadText(ctx, secrets, textWorkspace, MaxTextBytes)
	require.ErrorIs(t, err, ErrNoText)
	assert.ErrorContains(t, err, "plan-1")
	assert.NotErrorIs(t, err, ErrNotFound)

	_, err = LoadText(ctx, reservedSecrets(textWorkspace, 1), textWorkspace, MaxTextBytes)
	require.ErrorIs(t, err, ErrNotFound, "no plan at all is not the same as a plan without text")
}

// TestStoreRefusesOversizedText: the runner cuts its rendering to
// MaxTextBytes; Store refuses more, leaving the stored plan as it was.
func TestStoreRefusesOversizedText(t *testing.T) {
	ctx := context.Background()
	secrets := reservedSecrets(textWorkspace, 1)
	_, err := Store(ctx, secrets, textInput("plan-1", []byte("text")))
	require.NoError(t, err)

	_, err = Store(ctx, secrets, textInput("plan-2", bytes.Repeat([]byte("x"), MaxTextBytes+1)))
	require.ErrorIs(t, err, ErrTooLarge)
	p, err := LoadText(ctx, secrets, textWorkspace, MaxTextBytes)
	require.NoError(t, err)
	assert.Equal(t, "plan-1", p.ID)
}

// TestLoadTextRefusesATextBomb: a forged bundle whose plan.txt unpacks to
// 16 MiB from one small chunk is refused with ErrTooLarge before it is
// unpacked, and a text just over the reader's bound is refused too.
func TestLoadTextRefusesATextBomb(t *testing.T) {
	ctx := context.Background()
	in := textInput("plan-1", nil)
	bomb, err := pack(in.JSON, bytes.Repeat([]byte(" "), 16<<20), in.Binary)
	require.NoError(t, err)
	secrets := reservedSecrets(textWorkspace, 1)
	secrets.putBundle(t, in, bomb)
	runtime.GC()

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = LoadText(ctx, secrets, textWorkspace, MaxTextBytes)
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, ErrTooLarge)
	assert.ErrorContains(t, err, "plan.txt unpacks to")
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("LoadText allocated %d KiB to refuse a %d KiB chunk that unpacks to 16 MiB", allocated>>10, len(bomb)>>10)
	assert.Less(t, allocated, uint64(8<<20), "the text was not unpacked into memory")

	text := []byte("0123456789")
	stream, err := pack(in.JSON, text, in.Binary)
	require.NoError(t, err)
	secrets.putBundle(t, in, stream)
	_, err = LoadText(ctx, secrets, textWorkspace, int64(len(text))-1)
	require.ErrorIs(t, err, ErrTooLarge)
	p, err := LoadText(ctx, secrets, textWorkspace, int64(len(text)))
	require.NoError(t, err)
	assert.Equal(t, text, p.Text)
}

// TestLoadTextChecksThePlanDigest: a text stored next to a plan.json that
// is not the plan chunk 0 names is corrupt.
func TestLoadTextChecksThePlanDigest(t *testing.T) {
	in := textInput("plan-1", nil)
	stream, err := pack([]byte(`{"format_version":"1.2","resource_changes":[]}`), []byte("text"), in.Binary)
	require.NoError(t, err)
	secrets := reservedSecrets(textWorkspace, 1)
	secrets.putBundle(t, in, stream)

	_, err = LoadText(context.Background(), secrets, textWorkspace, MaxTextBytes)
	require.ErrorIs(t, err, ErrCorrupt)
	assert.ErrorContains(t, err, "plan.json has digest")
}
