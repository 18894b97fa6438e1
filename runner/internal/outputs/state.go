package outputs

import (
	"encoding/json"
	"errors"
	"fmt"
)

// stateFormat is the state format version whose outputs FromState reads:
// OpenTofu's and Terraform's since 0.12.
const stateFormat = 4

// ErrStateFormat means a state is not in the format FromState reads.
var ErrStateFormat = errors.New("not a version 4 state")

// FromState returns the root module outputs of a state as the engine wrote
// it: what `output -json` prints, read without starting the engine. No
// state (nil) has no outputs.
func FromState(state []byte) (map[string]Output, error) {
	if state == nil {
		return map[string]Output{}, nil
	}
	var s struct {
		Version int `json:"version"`
		Outputs map[string]struct {
			Value     json.RawMessage `json:"value"`
			Sensitive bool            `json:"sensitive"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal(state, &s); err != nil {
		return nil, fmt.Errorf("reading the state's outputs: %w", err)
	}
	if s.Version != stateFormat {
		return nil, fmt.Errorf("%w: version %d", ErrStateFormat, s.Version)
	}
	all := make(map[string]Output, len(s.Outputs))
	for name, o := range s.Outputs {
		all[name] = Output{Sensitive: o.Sensitive, Value: o.Value}
	}
	return all, nil
}
