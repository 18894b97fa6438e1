package planfile

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
	"google.golang.org/protobuf/encoding/protowire"
)

// entry is one zip entry of a test plan file.
type entry struct {
	name string
	data []byte
}

// planZip builds a plan file of entries, in that order (names may repeat).
func planZip(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: zip.Deflate})
		require.NoError(t, err)
		_, err = w.Write(e.data)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// tfplan is a plan protobuf with only a backend (Plan.backend = 13) of
// type typ in the default workspace, configured as config.
func tfplan(t *testing.T, typ string, config map[string]any) []byte {
	t.Helper()
	packed, err := msgpack.Marshal(config)
	require.NoError(t, err)
	var dynamic, backend, plan []byte
	dynamic = protowire.AppendTag(dynamic, dynamicMsgpackField, protowire.BytesType)
	dynamic = protowire.AppendBytes(dynamic, packed)
	backend = protowire.AppendTag(backend, backendTypeField, protowire.BytesType)
	backend = protowire.AppendString(backend, typ)
	backend = protowire.AppendTag(backend, backendConfigField, protowire.BytesType)
	backend = protowire.AppendBytes(backend, dynamic)
	backend = protowire.AppendTag(backend, backendWorkspaceField, protowire.BytesType)
	backend = protowire.AppendString(backend, defaultWorkspace)
	plan = protowire.AppendTag(plan, 1, protowire.VarintType) // version
	plan = protowire.AppendVarint(plan, 3)
	plan = protowire.AppendTag(plan, planBackendField, protowire.BytesType)
	plan = protowire.AppendBytes(plan, backend)
	return plan
}

// savedPlan is every entry OpenTofu 1.10 writes into a saved plan, in its
// order: the plan, the two states, the configuration snapshot and the
// dependency lock.
func savedPlan(t *testing.T) []entry {
	t.Helper()
	return []entry{
		{"tfplan", tfplan(t, "http", map[string]any{"address": nil, "lock_address": nil})},
		{"tfstate", []byte(`{"version":4,"serial":1}`)},
		{"tfstate-prev", []byte(`{"version":4,"serial":1}`)},
		{"tfconfig/m-/main.tf", []byte("locals {}\n")},
		{"tfconfig/m-child/main.tf", []byte("output \"x\" { value = 1 }\n")},
		{"tfconfig/modules.json", []byte(`[{"Key":"","Source":"","Dir":"."},{"Key":"child","Source":"./child","Dir":"child"}]`)},
		{".terraform.lock.hcl", []byte("# lock\n")},
	}
}

func TestReadAcceptsWhatTheEngineWrites(t *testing.T) {
	f, err := Read(planZip(t, savedPlan(t)...))
	require.NoError(t, err)
	assert.Equal(t, "http", f.Backend.Type)
	require.NoError(t, f.CheckRunnerBackend())
	require.Len(t, f.Modules, 2)
	assert.Equal(t, []byte("locals {}\n"), f.Modules[0].Files["main.tf"])
}

// The engine reads the first entry of a name (tfplan, tfstate,
// tfstate-prev, the lock) or the last (the snapshot's manifest and
// files); a check that reads another one than the engine checks another
// plan than the one applied. A plan file re-zipped as an edited tfplan
// followed by every original entry renders the original `show -json`
// while a reader keeping the last tfplan sees the original backend. Read
// refuses any name that appears twice, and any name the engine does not
// write.
func TestReadRefusesDuplicateAndUnknownEntries(t *testing.T) {
	elsewhere := entry{"tfplan", tfplan(t, "http", map[string]any{"address": "http://127.0.0.1:9/collect", "lock_address": nil})}
	with := func(first []entry, rest ...entry) []entry {
		return append(append([]entry{}, first...), rest...)
	}
	for _, tc := range []struct {
		name      string
		entries   []entry
		entry     string
		duplicate bool
	}{
		{name: "an edited tfplan before the original", entries: with([]entry{elsewhere}, savedPlan(t)...), entry: "tfplan", duplicate: true},
		{name: "an edited tfplan after the original", entries: with(savedPlan(t), elsewhere), entry: "tfplan", duplicate: true},
		{name: "two states", entries: with(savedPlan(t), entry{"tfstate", []byte(`{}`)}), entry: "tfstate", duplicate: true},
		{name: "two previous states", entries: with(savedPlan(t), entry{"tfstate-prev", []byte(`{}`)}), entry: "tfstate-prev", duplicate: true},
		{name: "two locks", entries: with([]entry{{".terraform.lock.hcl", []byte("# other\n")}}, savedPlan(t)...), entry: ".terraform.lock.hcl", duplicate: true},
		{name: "two manifests", entries: with(savedPlan(t), entry{"tfconfig/modules.json", []byte(`[{"Key":"","Dir":"."}]`)}), entry: "tfconfig/modules.json", duplicate: true},
		{name: "a snapshot file twice", entries: with(savedPlan(t), entry{"tfconfig/m-/main.tf", []byte("locals {}\n")}), entry: "tfconfig/m-/main.tf", duplicate: true},
		{name: "an unknown entry", entries: with(savedPlan(t), entry{"notes.txt", []byte("x")}), entry: "notes.txt"},
		{name: "an unknown snapshot entry", entries: with(savedPlan(t), entry{"tfconfig/extra.json", []byte("{}")}), entry: "tfconfig/extra.json"},
		{name: "a directory entry", entries: with(savedPlan(t), entry{"tfconfig/", nil}), entry: "tfconfig/"},
		{name: "a state under another name", entries: with(savedPlan(t), entry{"tfstate-next", []byte(`{}`)}), entry: "tfstate-next"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Read(planZip(t, tc.entries...))
			require.Error(t, err, "read with backend %+v", f)
			assert.ErrorIs(t, err, ErrInvalid)
			var ee *EntryError
			require.True(t, errors.As(err, &ee), "%v", err)
			assert.Equal(t, tc.entry, ee.Name)
			assert.Equal(t, tc.duplicate, ee.Duplicate)
			if tc.duplicate {
				assert.ErrorContains(t, err, "appears twice")
			} else {
				assert.ErrorContains(t, err, "not an entry the engine writes")
			}
		})
	}
}

// The plan file the engine is given is rebuilt from exactly the entries
// Read checked: the same names, in the same order, with the same content,
// and nothing else of the file it read (data before the archive, its
// comment, the entries' own headers).
func TestReadRebuildsThePlanFileFromTheCheckedEntries(t *testing.T) {
	want := savedPlan(t)
	original := planZip(t, want...)
	padded := append([]byte("anything before the archive"), original...)
	for name, planFile := range map[string][]byte{"as written": original, "with data before the archive": padded} {
		t.Run(name, func(t *testing.T) {
			f, err := Read(planFile)
			require.NoError(t, err)
			require.True(t, bytes.HasPrefix(f.Binary, []byte("PK\x03\x04")), "the rebuilt file starts with its first entry")
			assert.Equal(t, want, entries(t, f.Binary))
			again, err := Read(f.Binary)
			require.NoError(t, err)
			assert.Equal(t, f.Binary, again.Binary, "a rebuilt file rebuilds to itself")
			assert.Equal(t, f.Backend, again.Backend)
		})
	}
}

// entries reads every entry of a zip, in order.
func entries(t *testing.T, b []byte) []entry {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	assert.Empty(t, zr.Comment)
	var out []entry
	for _, e := range zr.File {
		assert.Empty(t, e.Extra, "%s has no extra fields", e.Name)
		rc, err := e.Open()
		require.NoError(t, err)
		data, err := io.ReadAll(rc)
		require.NoError(t, err)
		require.NoError(t, rc.Close())
		out = append(out, entry{e.Name, data})
	}
	return out
}

// An entry compressed with a method the engine cannot read is refused
// before it is copied into the rebuilt file.
func TestReadRefusesAnUnknownCompressionMethod(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range savedPlan(t) {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: zip.Deflate})
		require.NoError(t, err)
		_, err = w.Write(e.data)
		require.NoError(t, err)
	}
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "tfconfig/m-/extra.tf", Method: 99, CompressedSize64: 1, UncompressedSize64: 1})
	require.NoError(t, err)
	_, err = w.Write([]byte("x"))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	_, err = Read(buf.Bytes())
	assert.ErrorIs(t, err, ErrInvalid)
	assert.ErrorContains(t, err, "compressed with method 99")
}
