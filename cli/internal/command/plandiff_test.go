package command

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWriteDiff(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	a := map[string]plannedChange{
		"terraform_data.same":    {Actions: []string{"create"}, After: map[string]json.RawMessage{"input": raw(`{"a": 1, "b": 2}`)}},
		"terraform_data.values":  {Actions: []string{"update"}, After: map[string]json.RawMessage{"input": raw(`"prod"`), "triggers": raw(`null`)}},
		"terraform_data.actions": {Actions: []string{"delete", "create"}},
		"terraform_data.prod":    {Actions: []string{"create"}},
	}
	b := map[string]plannedChange{
		"terraform_data.same":    {Actions: []string{"create"}, After: map[string]json.RawMessage{"input": raw(`{"b":2,"a":1}`)}},
		"terraform_data.values":  {Actions: []string{"update"}, After: map[string]json.RawMessage{"input": raw(`"dev"`), "extra": raw(`1`), "triggers": raw(`null`)}},
		"terraform_data.actions": {Actions: []string{"update"}},
		"terraform_data.dev":     {Actions: []string{"delete"}},
	}
	var out strings.Builder
	n := writeDiff(&out, "prod", "dev", a, b)
	assert.Equal(t, 4, n)
	assert.Equal(t, `  ~ terraform_data.actions: delete, create in prod, update in dev
  only in prod: terraform_data.prod (create)
  ~ terraform_data.values (update): differs in extra, input
  only in dev: terraform_data.dev (delete)
  1 resource change(s) the same, 4 different
`, out.String())
	assert.NotContains(t, out.String(), `"prod"`, "no value is printed")

	out.Reset()
	assert.Zero(t, writeDiff(&out, "prod", "dev", map[string]plannedChange{"x": a["terraform_data.same"]}, map[string]plannedChange{"x": b["terraform_data.same"]}))
}
