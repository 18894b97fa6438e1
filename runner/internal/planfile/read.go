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

// Entries of the plan file (OpenTofu's and Terraform's planfile layout).
const (
	planEntry       = "tfplan"
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

// File is what a saved plan carries besides the plan.
type File struct {
	// Modules are the snapshot's modules, the root ("" key) first.
	Modules []Module
	// Backend is the backend the plan's apply writes the state to.
	Backend Backend
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

// Read reads the configuration snapshot and the backend of a saved plan.
func Read(planBinary []byte) (*File, error) {
	zr, err := zip.NewReader(bytes.NewReader(planBinary), int64(len(planBinary)))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
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
			if _, dup := files[key][name]; dup {
				return nil, fmt.Errorf("%w: snapshot entry %q appears twice", ErrInvalid, e.Name)
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
	return f, nil
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
