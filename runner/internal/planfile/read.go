package planfile

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/vmihailenco/msgpack/v5"
	"google.golang.org/protobuf/encoding/protowire"
)

// Entries of the plan file (OpenTofu's and Terraform's planfile layout):
// OpenTofu 1.10 writes tfplan, tfstate, tfstate-prev, the configuration
// snapshot (tfconfig/modules.json and tfconfig/m-<module>/<file>) and
// .terraform.lock.hcl, each once, and nothing else
// (internal/plans/planfile, writer.go and config_snapshot.go).
const (
	planEntry       = "tfplan"
	stateEntry      = "tfstate"
	prevStateEntry  = "tfstate-prev"
	lockEntry       = ".terraform.lock.hcl"
	snapshotPrefix  = "tfconfig/"
	manifestEntry   = snapshotPrefix + "modules.json"
	modulePrefix    = snapshotPrefix + "m-"
	maxPlanEntry    = 512 << 20
	maxSnapshotSize = 64 << 20
)

// Fields of the plan protobuf (planproto: Plan.backend = 13; Backend.type
// = 1, .config = 2, .workspace = 3; DynamicValue.msgpack = 1).
const (
	planBackendField      = 13
	backendTypeField      = 1
	backendConfigField    = 2
	backendWorkspaceField = 3
	dynamicMsgpackField   = 1
)

// ErrInvalid means the plan file is not a readable plan.
var ErrInvalid = errors.New("the saved plan cannot be read")

// EntryError is an entry Read refuses (it is ErrInvalid): a name that
// appears twice, or one the engine does not write. The engine reads the
// first entry of some names (tfplan, the states, the lock) and the last of
// others (the snapshot), so with a name twice a check and the engine can
// read two different plans from one file; an entry the engine does not
// write was put there by something else.
type EntryError struct {
	// Name is the entry's name.
	Name string
	// Duplicate is true when the name appears twice, false when the
	// engine does not write an entry of that name.
	Duplicate bool
}

func (e *EntryError) Error() string {
	if e.Duplicate {
		return fmt.Sprintf("%s: entry %q appears twice", ErrInvalid, e.Name)
	}
	return fmt.Sprintf("%s: %q is not an entry the engine writes", ErrInvalid, e.Name)
}

// Unwrap makes an EntryError ErrInvalid.
func (e *EntryError) Unwrap() error { return ErrInvalid }

// File is what a saved plan carries besides the plan.
type File struct {
	// Modules are the snapshot's modules, the root ("" key) first.
	Modules []Module
	// Backend is the backend the plan's apply writes the state to.
	Backend Backend
	// Binary is the plan file rebuilt from exactly the entries Read
	// accepted, in their order and with their compressed bytes, and
	// nothing else of the file it read (no data before or after the
	// archive, no comment, headers of its own): the file to give the
	// engine, so that it applies what was checked.
	Binary []byte
}

// Module is one module of the configuration snapshot.
type Module struct {
	// Key is the module's path of call names joined with dots ("" for the
	// root module).
	Key string `json:"Key"`
	// Source is the module call's source address.
	Source string `json:"Source,omitempty"`
	// Dir is the module's directory relative to the root module's, as the
	// engine recorded it.
	Dir string `json:"Dir"`
	// Files are the module's configuration files by name.
	Files map[string][]byte `json:"-"`
}

// Backend is a saved plan's backend.
type Backend struct {
	Type      string
	Workspace string
	// Config holds the backend's attributes as the engine encoded them
	// (msgpack of the backend schema's object): nil for an attribute not
	// set, strings, numbers (int64, uint64 or float64), bools, lists and
	// maps.
	Config map[string]any
}

// Read reads the configuration snapshot and the backend of a saved plan,
// and rebuilds the plan file from the entries it accepted (File.Binary).
// It refuses a plan file with any name twice or any entry the engine does
// not write (an EntryError), or with an entry it cannot read.
func Read(planBinary []byte) (*File, error) {
	zr, err := zip.NewReader(bytes.NewReader(planBinary), int64(len(planBinary)))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := checkEntries(zr.File); err != nil {
		return nil, err
	}
	f := &File{}
	files := map[string]map[string][]byte{}
	var manifest, plan []byte
	budget := int64(maxSnapshotSize)
	for _, e := range zr.File {
		switch {
		case e.Name == planEntry:
			if plan, err = readEntry(e, maxPlanEntry); err != nil {
				return nil, err
			}
		case e.Name == manifestEntry:
			if manifest, err = readEntry(e, budget); err != nil {
				return nil, err
			}
			budget -= int64(len(manifest))
		case strings.HasPrefix(e.Name, modulePrefix):
			key, name := path.Split(e.Name[len(modulePrefix):])
			if key == "" || name == "" {
				return nil, fmt.Errorf("%w: unexpected snapshot entry %q", ErrInvalid, e.Name)
			}
			data, err := readEntry(e, budget)
			if err != nil {
				return nil, err
			}
			budget -= int64(len(data))
			key = strings.TrimSuffix(key, "/")
			if files[key] == nil {
				files[key] = map[string][]byte{}
			}
			files[key][name] = data
		}
	}
	if plan == nil || manifest == nil {
		return nil, fmt.Errorf("%w: it has no %s or no %s", ErrInvalid, planEntry, manifestEntry)
	}
	if err := json.Unmarshal(manifest, &f.Modules); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, manifestEntry, err)
	}
	seen := map[string]bool{}
	for i := range f.Modules {
		m := &f.Modules[i]
		if seen[m.Key] {
			return nil, fmt.Errorf("%w: module %q appears twice in %s", ErrInvalid, m.Key, manifestEntry)
		}
		seen[m.Key] = true
		m.Files = files[m.Key]
		if m.Files == nil {
			m.Files = map[string][]byte{}
		}
	}
	for key := range files {
		if !seen[key] {
			return nil, fmt.Errorf("%w: the snapshot has files of module %q, which %s does not list", ErrInvalid, key, manifestEntry)
		}
	}
	if !seen[""] {
		return nil, fmt.Errorf("%w: the snapshot has no root module", ErrInvalid)
	}
	if f.Backend, err = readBackend(plan); err != nil {
		return nil, err
	}
	if f.Binary, err = rebuild(zr.File); err != nil {
		return nil, err
	}
	return f, nil
}

// checkEntries refuses a name that appears twice, an entry the engine
// does not write and one it cannot decompress.
func checkEntries(entries []*zip.File) error {
	seen := make(map[string]bool, len(entries))
	for _, e := range entries {
		if seen[e.Name] {
			return &EntryError{Name: e.Name, Duplicate: true}
		}
		seen[e.Name] = true
		if !engineEntry(e.Name) {
			return &EntryError{Name: e.Name}
		}
		if e.Method != zip.Deflate && e.Method != zip.Store {
			return fmt.Errorf("%w: %s is compressed with method %d", ErrInvalid, e.Name, e.Method)
		}
	}
	return nil
}

// engineEntry says whether the engine writes an entry of that name into a
// saved plan (a snapshot file's module and name are checked by Read).
func engineEntry(name string) bool {
	switch name {
	case planEntry, stateEntry, prevStateEntry, lockEntry, manifestEntry:
		return true
	}
	return strings.HasPrefix(name, modulePrefix) && !strings.HasSuffix(name, "/")
}

// rebuild writes a plan file of entries, in their order, each with a
// header of its name, compression method, checksum and sizes alone and
// its compressed bytes as they are.
func rebuild(entries []*zip.File) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.CreateRaw(&zip.FileHeader{
			Name:               e.Name,
			Method:             e.Method,
			CRC32:              e.CRC32,
			CompressedSize64:   e.CompressedSize64,
			UncompressedSize64: e.UncompressedSize64,
		})
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, e.Name, err)
		}
		r, err := e.OpenRaw()
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, e.Name, err)
		}
		n, err := io.Copy(w, r)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, e.Name, err)
		}
		if uint64(n) != e.CompressedSize64 {
			return nil, fmt.Errorf("%w: %s has %d compressed bytes, not the %d its header says", ErrInvalid, e.Name, n, e.CompressedSize64)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return buf.Bytes(), nil
}

// readEntry reads a zip entry of at most limit bytes.
func readEntry(e *zip.File, limit int64) ([]byte, error) {
	if int64(e.UncompressedSize64) > limit || limit <= 0 {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrInvalid, e.Name, limit)
	}
	rc, err := e.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, e.Name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, e.Name, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrInvalid, e.Name, limit)
	}
	return b, nil
}

// readBackend reads Plan.backend from the plan protobuf. A plan without
// one has an empty Backend.
func readBackend(plan []byte) (Backend, error) {
	var b Backend
	var raw []byte
	found := false
	err := fields(plan, func(num protowire.Number, v []byte) error {
		if num == planBackendField {
			if found {
				return fmt.Errorf("%w: the plan has two backends", ErrInvalid)
			}
			raw, found = v, true
		}
		return nil
	})
	if err != nil || !found {
		return b, err
	}
	var config []byte
	err = fields(raw, func(num protowire.Number, v []byte) error {
		switch num {
		case backendTypeField:
			b.Type = string(v)
		case backendWorkspaceField:
			b.Workspace = string(v)
		case backendConfigField:
			return fields(v, func(num protowire.Number, v []byte) error {
				if num == dynamicMsgpackField {
					config = v
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return b, err
	}
	if len(config) > 0 {
		if err := msgpack.Unmarshal(config, &b.Config); err != nil {
			return b, fmt.Errorf("%w: the backend configuration: %w", ErrInvalid, err)
		}
	}
	return b, nil
}

// fields calls fn with the number and bytes of every length-delimited
// field of a protobuf message, skipping the others.
func fields(msg []byte, fn func(protowire.Number, []byte) error) error {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return fmt.Errorf("%w: %w", ErrInvalid, protowire.ParseError(n))
		}
		msg = msg[n:]
		if typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(msg)
			if n < 0 {
				return fmt.Errorf("%w: %w", ErrInvalid, protowire.ParseError(n))
			}
			if err := fn(num, v); err != nil {
				return err
			}
			msg = msg[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, msg)
		if n < 0 {
			return fmt.Errorf("%w: %w", ErrInvalid, protowire.ParseError(n))
		}
		msg = msg[n:]
	}
	return nil
}
