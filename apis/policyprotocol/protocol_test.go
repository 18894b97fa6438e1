package policyprotocol

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProtocolRoundTrip: requests and responses read back as written, one
// after another on one stream, plan bytes untouched even when they are not
// JSON; the stream's end is io.EOF.
func TestProtocolRoundTrip(t *testing.T) {
	var stream bytes.Buffer
	first := Request{Policies: []json.RawMessage{json.RawMessage(`{"kind":"ValidatingPolicy"}`)}, TimeoutMillis: 1500}
	require.NoError(t, WriteRequest(&stream, first, []byte(`{"format_version":"1.2"}`)))
	require.NoError(t, WriteRequest(&stream, Request{PlanBytes: 99}, []byte("not json\n{")))

	r := bufio.NewReader(&stream)
	req, plan, err := ReadRequest(r)
	require.NoError(t, err)
	assert.Equal(t, 1500*time.Millisecond, req.Timeout())
	assert.JSONEq(t, `{"kind":"ValidatingPolicy"}`, string(req.Policies[0]))
	assert.Equal(t, `{"format_version":"1.2"}`, string(plan))
	req, plan, err = ReadRequest(r)
	require.NoError(t, err)
	assert.Equal(t, len("not json\n{"), req.PlanBytes, "PlanBytes is the plan's length, whatever the caller set")
	assert.Equal(t, "not json\n{", string(plan))
	_, _, err = ReadRequest(r)
	assert.ErrorIs(t, err, io.EOF)

	stream.Reset()
	v := Verdict{Policies: []string{"a"}, Violations: []Violation{{Policy: "a", Message: "no", Action: ActionDeny}}, Message: "blocked"}
	require.NoError(t, WriteResponse(&stream, v))
	require.NoError(t, WriteResponse(&stream, Errored("engine gone")))
	r = bufio.NewReader(&stream)
	got, err := ReadResponse(r)
	require.NoError(t, err)
	assert.Equal(t, v, got)
	got, err = ReadResponse(r)
	require.NoError(t, err)
	assert.True(t, got.Errored)
	assert.Equal(t, "error", got.Result())
	_, err = ReadResponse(r)
	assert.ErrorIs(t, err, io.EOF)
}

// TestProtocolRefusesWhatIsOutOfStep: a cut plan, a negative length and a
// line that is not JSON are errors, never a request.
func TestProtocolRefusesWhatIsOutOfStep(t *testing.T) {
	for name, stream := range map[string]string{
		"plan cut short":  `{"policies":[],"planBytes":10,"timeoutMillis":0}` + "\n{}",
		"negative length": `{"policies":[],"planBytes":-1,"timeoutMillis":0}` + "\n",
		"not JSON":        "hello\n",
		"no newline":      `{"policies":[]`,
	} {
		_, _, err := ReadRequest(bufio.NewReader(bytes.NewBufferString(stream)))
		require.Error(t, err, name)
		assert.NotEqual(t, io.EOF, err, "%s: not the clean end of the stream", name)
	}
}
