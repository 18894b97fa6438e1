package planrender

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRender(t *testing.T) {
	for _, tc := range []struct {
		name string
		json string
		want string
	}{
		{
			name: "no changes",
			json: `{"format_version":"1.2","resource_changes":[{"address":"a.b","mode":"managed","type":"a","name":"b","change":{"actions":["no-op"],"before":{"x":1},"after":{"x":1}}}]}`,
			want: "No changes. Your infrastructure matches the configuration.\n",
		},
		{
			name: "a create with sensitive, unknown and nested values",
			json: `{"format_version":"1.2","resource_changes":[{"address":"db.main","mode":"managed","type":"db","name":"main","change":{"actions":["create"],"before":null,
				"after":{"name":"main","password":"hunter2-secret","tags":{"env":"dev","owner":"ops-secret"},"ports":[80,443],"empty":{},"gone":null},
				"after_unknown":{"id":true},"before_sensitive":false,"after_sensitive":{"password":true,"tags":{"owner":true}}}}]}`,
			want: `Resource changes:

  # db.main will be created
  + resource "db" "main" {
      + empty    = {}
      + id       = (known after apply)
      + name     = "main"
      + password = (sensitive value)
      + ports    = [
          + 80,
          + 443,
        ]
      + tags     = {
          + env   = "dev"
          + owner = (sensitive value)
        }
    }

Plan: 1 to add, 0 to change, 0 to destroy.
`,
		},
		{
			name: "an update of nested values, a sensitive one among them",
			json: `{"format_version":"1.2","resource_changes":[{"address":"module.m.db.main","module_address":"module.m","mode":"managed","type":"db","name":"main","change":{"actions":["update"],
				"before":{"id":"i-1","size":1,"password":"old-secret","tags":{"env":"dev","team":"a"},"list":["a","b"]},
				"after":{"id":"i-1","size":2,"password":"new-secret","tags":{"env":"prod","team":"a"},"list":["a","c"]},
				"after_unknown":{},"before_sensitive":{"password":true},"after_sensitive":{"password":true}}}]}`,
			want: `Resource changes:

  # module.m.db.main will be updated in-place
  ~ resource "db" "main" {
      ~ list     = [
          ~ [1] = "b" -> "c"
            # (1 unchanged element hidden)
        ]
      ~ password = (sensitive value)
      ~ size     = 1 -> 2
      ~ tags     = {
          ~ env = "dev" -> "prod"
            # (1 unchanged attribute hidden)
        }
        # (1 unchanged attribute hidden)
    }

Plan: 0 to add, 1 to change, 0 to destroy.
`,
		},
		{
			name: "a replace, a destroy, a read and a move",
			json: `{"format_version":"1.2","resource_changes":[
				{"address":"a.r","mode":"managed","type":"a","name":"r","action_reason":"replace_by_request","change":{"actions":["create","delete"],"before":{"id":"1","k":"v1"},"after":{"k":"v2"},"after_unknown":{"id":true},"replace_paths":[["k"]]}},
				{"address":"a.gone[\"x\"]","mode":"managed","type":"a","name":"gone","index":"x","action_reason":"delete_because_each_key","change":{"actions":["delete"],"before":{"id":"2"},"after":null}},
				{"address":"data.a.d","mode":"data","type":"a","name":"d","action_reason":"read_because_config_unknown","change":{"actions":["read"],"before":null,"after":{"q":"x"},"after_unknown":{"out":true}}},
				{"address":"data.a.old","mode":"data","type":"a","name":"old","change":{"actions":["delete"],"before":{"q":"x"},"after":null}},
				{"address":"a.new","previous_address":"a.old","mode":"managed","type":"a","name":"new","change":{"actions":["no-op"],"before":{"id":"3"},"after":{"id":"3"}}}]}`,
			want: `Resource changes:

  # a.r will be replaced, as requested
+/- resource "a" "r" {
      ~ id = "1" -> (known after apply)
      ~ k  = "v1" -> "v2" # forces replacement
    }

  # a.gone["x"] will be destroyed
  # (because key ["x"] is not in for_each map)
  - resource "a" "gone" {
      - id = "2" -> null
    }

  # data.a.d will be read during apply
  # (config refers to values not yet known)
 <= data "a" "d" {
      + out = (known after apply)
      + q   = "x"
    }

  # a.old has moved to a.new
    resource "a" "new" {
        # (1 unchanged attribute hidden)
    }

Plan: 1 to add, 0 to change, 2 to destroy.
`,
		},
		{
			name: "outputs only",
			json: `{"format_version":"1.2","output_changes":{
				"url":{"actions":["create"],"before":null,"after":"https://x","after_unknown":false,"before_sensitive":false,"after_sensitive":false},
				"token":{"actions":["update"],"before":"old-secret","after":"new-secret","after_unknown":false,"before_sensitive":true,"after_sensitive":true},
				"same":{"actions":["no-op"],"before":"s","after":"s"}}}`,
			want: `Changes to Outputs:
  ~ token = (sensitive value)
  + url   = "https://x"
`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Render([]byte(tc.json), Options{})
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.NotContains(t, got, "secret", "no sensitive value is shown")
		})
	}
}

// Every string of the JSON reaches the rendering quoted or escaped: no
// control character (a terminal escape, a carriage return that rewrites
// the line, a bidirectional override) and no line break that would start
// a line of its own, so the JSON cannot forge a line of the rendering.
func TestRenderEscapesWhatTheJSONSays(t *testing.T) {
	got, err := Render([]byte(`{"format_version":"1.2","resource_changes":[{"address":"a.b[\"\u001b[2K\r\u202eNo changes.\"]","mode":"managed","type":"a\nb","name":"b","change":{"actions":["create"],"before":null,
		"after":{"v":"x\n\nPlan: 0 to add, 0 to change, 0 to destroy.\n\u001b[31m","k\nPlan: 0 to add":"y"}}}]}`), Options{})
	require.NoError(t, err)
	for _, line := range strings.Split(got, "\n") {
		assert.NotRegexp(t, `^(No changes|Plan: 0)`, line, "a forged line")
		for _, c := range line {
			assert.False(t, c < 0x20 || c == 0x7f || c >= 0x80 && c <= 0x9f || c == 0x202e, "control character %U in %q", c, line)
		}
	}
	assert.Contains(t, got, `# a.b["\u001b[2K\u000d\u202eNo changes."] will be created`)
	assert.Contains(t, got, `+ v                   = "x\n\nPlan: 0 to add, 0 to change, 0 to destroy.\n\x1b[31m"`)
	assert.Contains(t, got, "\nPlan: 1 to add, 0 to change, 0 to destroy.\n")
}

func TestRenderRefusesWhatIsNotAPlan(t *testing.T) {
	for _, doc := range []string{`not json`, `{"resource_changes":[]}`, `{"format_version":"1.2"} {"format_version":"1.2"}`} {
		_, err := Render([]byte(doc), Options{})
		assert.Error(t, err, doc)
	}
}

// A secret given to a variable the configuration does not mark sensitive
// (read from a Secret, say) is in the plan JSON in clear. The rendering
// masks the values of the variables it is told are secret, wherever they
// appear, as the runner masks them in its output; values shorter than 4
// bytes are not masked, as the runner's are not.
func TestRenderMasksTheValuesOfSecretVariables(t *testing.T) {
	const doc = `{"format_version":"1.2","variables":{"token":{"value":"s3cr3t-t0ken"},"region":{"value":"eu-west-1"},"pin":{"value":"123"},
		"cert":{"value":"-----BEGIN-----\nMIIBszCCAVmgAwIBAgIU\n-----END-----"}},
		"resource_changes":[{"address":"a.b[\"s3cr3t-t0ken\"]","mode":"managed","type":"a","name":"b","change":{"actions":["create"],"before":null,
		"after":{"header":"Bearer s3cr3t-t0ken","region":"eu-west-1","s3cr3t-t0ken":"key","exact":"s3cr3t-t0ken","pin":"123","pem":"MIIBszCCAVmgAwIBAgIU"}}}]}`
	got, err := Render([]byte(doc), Options{SensitiveVariables: []string{"token", "pin", "cert"}})
	require.NoError(t, err)
	assert.NotContains(t, got, "s3cr3t-t0ken")
	assert.NotContains(t, got, "MIIBszCCAVmgAwIBAgIU")
	assert.Contains(t, got, `# a.b["(sensitive value)"] will be created`)
	assert.Regexp(t, `\+ header + = "Bearer \(sensitive value\)"\n`, got)
	assert.Regexp(t, `\+ exact + = \(sensitive value\)\n`, got)
	assert.Regexp(t, `\+ pem + = \(sensitive value\)\n`, got, "a line of a multi-line secret")
	assert.Regexp(t, `\+ \(sensitive value\) = "key"\n`, got)
	assert.Regexp(t, `\+ region + = "eu-west-1"\n`, got, "a variable not named is shown")
	assert.Regexp(t, `\+ pin + = "123"\n`, got, "too short to mask")

	got, err = Render([]byte(doc), Options{AllVariablesSensitive: true})
	require.NoError(t, err)
	assert.NotContains(t, got, "eu-west-1")
	assert.NotContains(t, got, "s3cr3t-t0ken")
}

// A plan OpenTofu 1.10.6 made (testdata/plan.json: an update of nested
// values, a sensitive input, a create, a destroy, a sensitive output) is
// rendered as testdata/plan.txt says, with no sensitive value in it and
// the secret variable's value masked.
func TestRenderOpenTofuPlan(t *testing.T) {
	planJSON, err := os.ReadFile(filepath.Join("testdata", "plan.json"))
	require.NoError(t, err)
	got, err := Render(planJSON, Options{SensitiveVariables: []string{"token"}})
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join("testdata", "plan.txt"))
	require.NoError(t, err)
	assert.Equal(t, string(want), got)
	assert.NotContains(t, got, "pw-sensitive-99c4", "the sensitive input")
	assert.NotContains(t, got, "tok-3f9a1c77e2", "the secret variable")
}
