package plansummary

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Summary is what a plan does: its resource change counts and whether it
// changes anything at all (a resource or an output).
type Summary struct {
	Counts
	// HasChanges is true when a resource or an output changes.
	HasChanges bool
}

// Read summarises a plan JSON document read from r as it streams, holding
// one resource change at a time: the controller reads plans of any size
// this way. A document without a format_version is not a plan.
func Read(r io.Reader) (Summary, error) {
	var s Summary
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return s, err
	}
	hasFormat := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return s, readErr(err)
		}
		switch key, _ := tok.(string); key {
		case "format_version":
			var v string
			if err := dec.Decode(&v); err != nil {
				return s, readErr(err)
			}
			hasFormat = v != ""
		case "resource_changes":
			err = eachElement(dec, func() error {
				var rc ResourceChange
				if err := dec.Decode(&rc); err != nil {
					return err
				}
				s.add(rc.Change.Actions)
				return nil
			})
		case "output_changes":
			var outputs map[string]struct {
				Actions []string `json:"actions"`
			}
			if err = dec.Decode(&outputs); err == nil {
				for _, o := range outputs {
					s.HasChanges = s.HasChanges || changes(o.Actions)
				}
			}
		default:
			err = skipValue(dec)
		}
		if err != nil {
			return s, readErr(err)
		}
	}
	if !hasFormat {
		return s, errors.New("reading the plan JSON: no format_version, not a plan")
	}
	s.HasChanges = s.HasChanges || s.Total() > 0
	return s, nil
}

// add counts one resource's actions as Count does.
func (c *Counts) add(actions []string) {
	for _, a := range actions {
		switch a {
		case "create":
			c.Add++
		case "delete":
			c.Destroy++
		case "update":
			c.Change++
		}
	}
}

// changes says whether actions change anything.
func changes(actions []string) bool {
	for _, a := range actions {
		if a != "no-op" && a != "read" {
			return true
		}
	}
	return false
}

// eachElement calls fn for every element of the array the decoder is at;
// null is an empty array.
func eachElement(dec *json.Decoder, fn func() error) error {
	tok, err := dec.Token()
	if err != nil || tok == nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("expected an array, found %v", tok)
	}
	for dec.More() {
		if err := fn(); err != nil {
			return err
		}
	}
	_, err = dec.Token()
	return err
}

// skipValue reads past the value the decoder is at without keeping it.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return readErr(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("reading the plan JSON: expected %q, found %v", want, tok)
	}
	return nil
}

func readErr(err error) error { return fmt.Errorf("reading the plan JSON: %w", err) }
