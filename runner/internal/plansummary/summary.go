package plansummary

import (
	"encoding/json"
	"fmt"
)

// Counts are the resource changes of a plan, counted the way the engine's
// "Plan: N to add, N to change, N to destroy" line counts them: a replace
// adds one and destroys one; no-op and read are not counted.
type Counts struct {
	Add     int32
	Change  int32
	Destroy int32
}

// Total is the number of counted changes.
func (c Counts) Total() int32 { return c.Add + c.Change + c.Destroy }

// planJSON is the part of the plan JSON format this package reads.
type planJSON struct {
	FormatVersion   string `json:"format_version"`
	ResourceChanges []struct {
		Address string `json:"address"`
		Change  struct {
			Actions []string `json:"actions"`
		} `json:"change"`
	} `json:"resource_changes"`
}

// Count returns the change counts of a plan JSON document.
func Count(planJSONBytes []byte) (Counts, error) {
	var p planJSON
	if err := json.Unmarshal(planJSONBytes, &p); err != nil {
		return Counts{}, fmt.Errorf("reading the plan JSON: %w", err)
	}
	if p.FormatVersion == "" {
		return Counts{}, fmt.Errorf("reading the plan JSON: no format_version, not a plan")
	}
	var c Counts
	for _, rc := range p.ResourceChanges {
		var create, del, update bool
		for _, a := range rc.Change.Actions {
			switch a {
			case "create":
				create = true
			case "delete":
				del = true
			case "update":
				update = true
			}
		}
		if create {
			c.Add++
		}
		if del {
			c.Destroy++
		}
		if update {
			c.Change++
		}
	}
	return c, nil
}
