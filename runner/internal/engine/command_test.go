package engine

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStartFailed(t *testing.T) {
	dir := t.TempDir()
	notAProgram := filepath.Join(dir, "tofu")
	require.NoError(t, os.WriteFile(notAProgram, []byte{0x7f, 'E', 'L', 'F'}, 0o755))
	e, err := New(notAProgram, dir, time.Second, os.Stdout, os.Stderr)
	require.NoError(t, err)

	_, err = e.PlanJSON(context.Background(), "plan.bin")
	assert.True(t, StartFailed(err), "a binary the kernel refuses: %v", err)
	assert.True(t, StartFailed(&exec.Error{Name: "tofu", Err: exec.ErrNotFound}))

	failing := exec.Command("sh", "-c", "echo 'Error: Failed to read the plan' >&2; exit 1").Run()
	assert.False(t, StartFailed(failing), "an engine that ran and failed")
}

func TestPlanJSONReportsTheEnginesError(t *testing.T) {
	dir := t.TempDir()
	engine := filepath.Join(dir, "tofu")
	script := "#!/bin/sh\necho \"$TF_IN_AUTOMATION $TF_LOG|$*\"\n[ \"$4\" = plan.bin ] || { echo 'Error: Failed to read the plan file' >&2; exit 1; }\n"
	require.NoError(t, os.WriteFile(engine, []byte(script), 0o755))
	t.Setenv("TF_LOG", "TRACE")
	e, err := New(engine, dir, time.Second, os.Stdout, os.Stderr)
	require.NoError(t, err)

	out, err := e.PlanJSON(context.Background(), "plan.bin")
	require.NoError(t, err)
	assert.Equal(t, "1 |show -json -no-color plan.bin\n", string(out), "exactly what the engine printed, in automation, logging off")

	_, err = e.PlanJSON(context.Background(), "other.bin")
	require.Error(t, err)
	assert.Equal(t, "Failed to read the plan file", Summary(err))
	assert.False(t, StartFailed(err))
}

// Init starts the engine once, for init alone: no `version` first.
func TestInitStartsTheEngineOnce(t *testing.T) {
	dir := t.TempDir()
	engine := filepath.Join(dir, "tofu")
	starts := filepath.Join(dir, "starts")
	script := "#!/bin/sh\necho \"$*\" >> " + starts + "\necho initialised in \"$PWD\"\n"
	require.NoError(t, os.WriteFile(engine, []byte(script), 0o755))
	var stdout bytes.Buffer
	e, err := New(engine, dir, time.Second, &stdout, os.Stderr)
	require.NoError(t, err)

	require.NoError(t, e.Init(context.Background()))
	logged, err := os.ReadFile(starts)
	require.NoError(t, err)
	assert.Equal(t, "init -input=false -no-color\n", string(logged))
	assert.Equal(t, "initialised in "+dir+"\n", stdout.String(), "init's output goes to the run's stdout")
}

func TestPlanTextIsTheEnginesShow(t *testing.T) {
	dir := t.TempDir()
	engine := filepath.Join(dir, "tofu")
	require.NoError(t, os.WriteFile(engine, []byte("#!/bin/sh\necho \"$*\"\n"), 0o755))
	var stdout bytes.Buffer
	e, err := New(engine, dir, time.Second, &stdout, os.Stderr)
	require.NoError(t, err)

	text, err := e.PlanText(context.Background(), "plan.bin")
	require.NoError(t, err)
	assert.Equal(t, "show -no-color plan.bin\n", text, "one start, no version first")
	assert.Empty(t, stdout.String(), "the text is not printed again")
}

func TestBoundedBufferKeepsItsStart(t *testing.T) {
	b := &boundedBuffer{max: 4}
	n, err := b.Write([]byte("abc"))
	assert.Equal(t, 3, n)
	require.NoError(t, err)
	n, _ = b.Write([]byte("defg"))
	assert.Equal(t, 4, n)
	assert.Equal(t, "abcd", b.String())
}
