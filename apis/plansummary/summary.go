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

// Plan is the part of the plan JSON format Magos reads.
type Plan struct {
	FormatVersion   string           `json:"format_version"`
	ResourceChanges []ResourceChange `json:"resource_changes"`
}

// ResourceChange is one resource's planned change.
type ResourceChange struct {
	Address       string `json:"address"`
	ModuleAddress string `json:"module_address"`
	Mode          string `json:"mode"`
	Type          string `json:"type"`
	Name          string `json:"name"`
	Change        struct {
		Actions []string `json:"actions"`
	} `json:"change"`
}

// Changes reports whether the resource is changed (not a no-op or a read).
func (rc ResourceChange) Changes() bool { return changes(rc.Change.Actions) }

// Parse reads a plan JSON document; one without a format_version is not a
// plan.
func Parse(planJSON []byte) (Plan, error) {
	var p Plan
	if err := json.Unmarshal(planJSON, &p); err != nil {
		return Plan{}, fmt.Errorf("reading the plan JSON: %w", err)
	}
	if p.FormatVersion == "" {
		return Plan{}, fmt.Errorf("reading the plan JSON: no format_version, not a plan")
	}
	return p, nil
}

// Count returns the change counts of a plan JSON document.
func Count(planJSON []byte) (Counts, error) {
	p, err := Parse(planJSON)
	if err != nil {
		return Counts{}, err
	}
	var c Counts
	for _, rc := range p.ResourceChanges {
		c.add(rc.Change.Actions)
	}
	return c, nil
}
