package policyengine

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syntheticTypes are the resource types of a synthetic plan, with the
// attributes each carries besides tags.
var syntheticTypes = []struct {
	typ   string
	attrs func(i int) map[string]any
}{
	{"aws_instance", func(i int) map[string]any {
		return map[string]any{"ami": "ami-0abcdef1234567890", "instance_type": []string{"t3.micro", "m5.large"}[i%2], "subnet_id": fmt.Sprintf("subnet-%04d", i%7)}
	}},
	{"aws_s3_bucket", func(i int) map[string]any {
		return map[string]any{"bucket": fmt.Sprintf("magos-bench-%d", i), "force_destroy": false}
	}},
	{"aws_security_group", func(i int) map[string]any {
		return map[string]any{"name": fmt.Sprintf("sg-%d", i), "ingress": []any{
			map[string]any{"from_port": 443, "to_port": 443, "protocol": "tcp", "cidr_blocks": []any{"10.0.0.0/8"}},
		}}
	}},
	{"google_storage_bucket", func(i int) map[string]any {
		return map[string]any{"name": fmt.Sprintf("bench-%d", i), "location": "EU", "public": false}
	}},
	{"terraform_data", func(i int) map[string]any {
		return map[string]any{"input": map[string]any{"name": fmt.Sprintf("item-%d", i)}, "triggers_replace": nil}
	}},
}

// syntheticPlan builds plan JSON for n resources in the shape of
// `tofu show -json` (format 1.2): variables, planned_values,
// resource_changes (creates, updates, deletes, replacements, no-ops),
// output_changes, configuration, relevant_attributes. Resources are tagged
// owner/env/cost-center; none is protected or public.
func syntheticPlan(n int) []byte {
	var changes, planned, configured []any
	for i := range n {
		t := syntheticTypes[i%len(syntheticTypes)]
		name := fmt.Sprintf("r%d", i/len(syntheticTypes))
		address := t.typ + "." + name
		attrs := t.attrs(i)
		attrs["id"] = fmt.Sprintf("id-%d", i)
		attrs["tags"] = map[string]any{"owner": "team-a", "env": "prod", "cost-center": fmt.Sprintf("cc-%d", i%10)}
		var actions []any
		var before, after any = nil, attrs
		switch i % 20 {
		case 0:
			actions, before = []any{"delete", "create"}, attrs
		case 1:
			actions, before, after = []any{"delete"}, attrs, nil
		case 2, 3:
			actions, before = []any{"update"}, attrs
		case 4:
			actions, before = []any{"no-op"}, attrs
		default:
			actions = []any{"create"}
		}
		provider := "registry.opentofu.org/hashicorp/aws"
		switch t.typ {
		case "terraform_data":
			provider = "terraform.io/builtin/terraform"
		case "google_storage_bucket":
			provider = "registry.opentofu.org/hashicorp/google"
		}
		changes = append(changes, map[string]any{
			"address": address, "mode": "managed", "type": t.typ, "name": name, "provider_name": provider,
			"change": map[string]any{
				"actions": actions, "before": before, "after": after,
				"after_unknown":    map[string]any{"id": after != nil && before == nil},
				"before_sensitive": map[string]any{}, "after_sensitive": map[string]any{"tags": map[string]any{}},
			},
		})
		if after != nil {
			planned = append(planned, map[string]any{
				"address": address, "mode": "managed", "type": t.typ, "name": name, "provider_name": provider,
				"schema_version": 0, "values": after, "sensitive_values": map[string]any{"tags": map[string]any{}},
			})
		}
		if i < len(syntheticTypes) {
			configured = append(configured, map[string]any{
				"address": address, "mode": "managed", "type": t.typ, "name": name,
				"provider_config_key": t.typ, "schema_version": 0,
				"expressions": map[string]any{"tags": map[string]any{"references": []any{"local.tags"}}},
			})
		}
	}
	plan := map[string]any{
		"format_version":    "1.2",
		"terraform_version": "1.10.6",
		"variables":         map[string]any{"env": map[string]any{"value": "prod"}},
		"planned_values": map[string]any{
			"outputs":     map[string]any{"count": map[string]any{"sensitive": false, "value": n}},
			"root_module": map[string]any{"resources": planned},
		},
		"resource_changes": changes,
		"output_changes": map[string]any{"count": map[string]any{
			"actions": []any{"create"}, "before": nil, "after": n, "after_unknown": false,
			"before_sensitive": false, "after_sensitive": false,
		}},
		"configuration": map[string]any{
			"provider_config": map[string]any{"aws": map[string]any{"name": "aws", "full_name": "registry.opentofu.org/hashicorp/aws"}},
			"root_module":     map[string]any{"resources": configured},
		},
		"relevant_attributes": []any{},
		"timestamp":           "2026-01-01T00:00:00Z",
		"errored":             false,
	}
	out, err := json.Marshal(plan)
	if err != nil {
		panic(err)
	}
	return out
}

// TestSyntheticPlanHasRealShape: the benchmark's plan has the keys a real
// OpenTofu plan has, at the top, per resource change and per change.
func TestSyntheticPlanHasRealShape(t *testing.T) {
	var real, synthetic map[string]any
	require.NoError(t, json.Unmarshal(plan(t, tfTagged), &real))
	require.NoError(t, json.Unmarshal(syntheticPlan(10), &synthetic))
	keys := func(m any) []string { return slices.Sorted(maps.Keys(m.(map[string]any))) }
	assert.Subset(t, keys(synthetic), keys(real), "top-level keys")
	realRC := real["resource_changes"].([]any)[0].(map[string]any)
	synRC := synthetic["resource_changes"].([]any)[5].(map[string]any)
	assert.Subset(t, keys(synRC), slices.DeleteFunc(keys(realRC), func(k string) bool { return k == "index" }), "resource change keys")
	assert.Equal(t, keys(realRC["change"]), keys(synRC["change"]), "change keys")
	assert.Len(t, synthetic["resource_changes"], 10)
}
