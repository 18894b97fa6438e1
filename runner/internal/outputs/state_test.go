package outputs

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFromState(t *testing.T) {
	state := []byte(`{
  "version": 4,
  "terraform_version": "1.10.6",
  "serial": 3,
  "lineage": "l",
  "outputs": {
    "count": {"value": 10, "type": "number"},
    "token": {"value": "s3cr3t-value", "type": "string", "sensitive": true},
    "tags": {"value": {"a": "b"}, "type": ["object", {"a": "string"}]}
  },
  "resources": [],
  "check_results": null
}`)
	got, err := FromState(state)
	require.NoError(t, err)
	assert.Equal(t, map[string]Output{
		"count": {Value: json.RawMessage(`10`)},
		"token": {Sensitive: true, Value: json.RawMessage(`"s3cr3t-value"`)},
		"tags":  {Value: json.RawMessage(`{"a": "b"}`)},
	}, got)
}

func TestFromStateWithoutState(t *testing.T) {
	got, err := FromState(nil)
	require.NoError(t, err)
	assert.Empty(t, got)
}

func TestFromStateRefusesOtherFormats(t *testing.T) {
	_, err := FromState([]byte(`{"version": 3, "modules": []}`))
	assert.ErrorIs(t, err, ErrStateFormat)
	_, err = FromState([]byte(`not json`))
	assert.ErrorContains(t, err, "reading the state's outputs")
}
