package outputs

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSelect(t *testing.T) {
	all := map[string]Output{
		"url":    {Value: json.RawMessage(`"https://example.test"`)},
		"port":   {Value: json.RawMessage(`8080`)},
		"big":    {Value: json.RawMessage(`12345678901234567890`)},
		"tags":   {Value: json.RawMessage(`{ "b": [1, 2], "a": true }`)},
		"token":  {Sensitive: true, Value: json.RawMessage(`"s3cr3t"`)},
		"absent": {Value: json.RawMessage(`null`)},
	}
	tests := []struct {
		name        string
		names       []string
		wantData    map[string]string
		wantWritten []string
		wantMissing []string
	}{
		{
			name:  "all outputs",
			names: nil,
			wantData: map[string]string{
				"url": "https://example.test", "port": "8080", "tags": `{"b":[1,2],"a":true}`, "token": "s3cr3t", "absent": "null",
				"big": "12345678901234567890",
			},
			wantWritten: []string{"absent", "big", "port", "tags", "token", "url"},
		},
		{
			name:        "selected outputs, one missing",
			names:       []string{"token", "url", "nope"},
			wantData:    map[string]string{"url": "https://example.test", "token": "s3cr3t"},
			wantWritten: []string{"token", "url"},
			wantMissing: []string{"nope"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, written, missing, err := Select(all, tt.names)
			require.NoError(t, err)
			got := map[string]string{}
			for k, v := range data {
				got[k] = string(v)
			}
			assert.Equal(t, tt.wantData, got)
			assert.Equal(t, tt.wantWritten, written)
			assert.Equal(t, tt.wantMissing, missing)
		})
	}
}
