package policyprotocol

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// SandboxStatusCommand is the policy engine's argument that makes it
// sandbox itself as it does before serving, write the [Sandbox] it got on
// stdout as one line of JSON and exit. The workspace-controller runs it
// once at start.
const SandboxStatusCommand = "sandbox-status"

// Sandbox is what the policy engine's sandbox takes from it.
type Sandbox struct {
	// Files is true when the engine can open no file (the controller's
	// ServiceAccount token among them).
	Files bool `json:"files"`
	// Network is true when the engine can bind or connect no TCP socket.
	Network bool `json:"network"`
	// Missing says why a restriction is not there; empty when none is
	// missing.
	Missing string `json:"missing,omitempty"`
}

// Complete says whether the engine can open no file and reach no TCP
// socket.
func (s Sandbox) Complete() bool { return s.Files && s.Network }

// sandboxLine is the line the engine writes: its one key says what it is.
type sandboxLine struct {
	Sandbox *Sandbox `json:"sandbox"`
}

// WriteSandbox writes s as one line of JSON.
func WriteSandbox(w io.Writer, s Sandbox) error {
	data, err := json.Marshal(sandboxLine{Sandbox: &s})
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// ReadSandbox reads what WriteSandbox wrote.
func ReadSandbox(r io.Reader) (Sandbox, error) {
	var line sandboxLine
	if err := readLine(bufio.NewReader(io.LimitReader(r, 64<<10)), &line); err != nil {
		return Sandbox{}, fmt.Errorf("not a sandbox report: %w", err)
	}
	if line.Sandbox == nil {
		return Sandbox{}, fmt.Errorf("not a sandbox report")
	}
	return *line.Sandbox, nil
}
