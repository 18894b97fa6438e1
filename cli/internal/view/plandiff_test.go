package view

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/magos-dev/magos/cli/internal/planchange"
)

func TestWriteDiff(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	a := planchange.Change{Resources: map[string]planchange.Resource{
		"terraform_data.same":    {Actions: []string{"create"}, After: map[string]json.RawMessage{"input": raw(`{"a": 1, "b": 2}`)}},
		"terraform_data.values":  {Actions: []string{"update"}, After: map[string]json.RawMessage{"input": raw(`"prod"`), "triggers": raw(`null`)}},
		"terraform_data.actions": {Actions: []string{"delete", "create"}},
		"terraform_data.prod":    {Actions: []string{"create"}},
		"terraform_data.unknown": {Actions: []string{"create"}, Rest: map[string]json.RawMessage{"change.after_unknown": raw(`{"output":true}`)}},
	}}
	b := planchange.Change{Resources: map[string]planchange.Resource{
		"terraform_data.same":    {Actions: []string{"create"}, After: map[string]json.RawMessage{"input": raw(`{"b":2,"a":1}`)}},
		"terraform_data.values":  {Actions: []string{"update"}, After: map[string]json.RawMessage{"input": raw(`"dev"`), "extra": raw(`1`), "triggers": raw(`null`)}},
		"terraform_data.actions": {Actions: []string{"update"}},
		"terraform_data.dev":     {Actions: []string{"delete"}},
		"terraform_data.unknown": {Actions: []string{"create"}, Rest: map[string]json.RawMessage{"change.after_unknown": raw(`{"input":true,"output":true}`)}},
	}}
	var out strings.Builder
	n, parts := WriteDiff(&out, "prod", "dev", a, b)
	assert.Equal(t, 5, n)
	assert.Empty(t, parts)
	assert.Equal(t, `  ~ terraform_data.actions: delete, create in prod, update in dev
  only in prod: terraform_data.prod (create)
  ~ terraform_data.unknown (create): differs in change.after_unknown
  ~ terraform_data.values (update): differs in extra, input
  only in dev: terraform_data.dev (delete)
  1 resource change(s) the same, 5 different
`, out.String())
	assert.NotContains(t, out.String(), `"prod"`, "no value is printed")

	out.Reset()
	same := func(c planchange.Change) planchange.Change {
		return planchange.Change{Resources: map[string]planchange.Resource{"x": c.Resources["terraform_data.same"]}}
	}
	n, parts = WriteDiff(&out, "prod", "dev", same(a), same(b))
	assert.Zero(t, n)
	assert.Empty(t, parts)

	out.Reset()
	withParts := same(a)
	withParts.Outputs = map[string]json.RawMessage{"message": raw(`{"after":"a"}`), "kept": raw(`{}`)}
	withParts.Rest = map[string]json.RawMessage{"configuration": raw(`{"provisioner":"echo"}`)}
	other := same(b)
	other.Outputs = map[string]json.RawMessage{"message": raw(`{"after":"b"}`), "kept": raw(`{}`)}
	other.Rest = map[string]json.RawMessage{"configuration": raw(`{"provisioner":"rm"}`)}
	n, parts = WriteDiff(&out, "prod", "dev", withParts, other)
	assert.Zero(t, n)
	assert.Equal(t, []string{"outputs message", "configuration"}, parts)
	assert.Contains(t, out.String(), "  ~ outputs message: differs\n  ~ configuration: differs\n")
}
