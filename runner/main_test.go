package main

import (
	"bytes"
	"testing"
)

func TestUsage(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{name: "no command prints usage", args: nil, wantCode: 2, wantErr: "Commands:"},
		{name: "help prints usage on stdout", args: []string{"--help"}, wantCode: 0, wantOut: "plan"},
		{name: "unknown command is refused", args: []string{"deploy"}, wantCode: 2, wantErr: `unknown command "deploy"`},
		{name: "extra arguments are refused", args: []string{"plan", "now"}, wantCode: 2, wantErr: `unexpected arguments`},
		{name: "version prints the stamped version", args: []string{"version"}, wantCode: 0, wantOut: "runner dev"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if got := run(tt.args, &out, &errOut); got != tt.wantCode {
				t.Fatalf("exit code = %d, want %d", got, tt.wantCode)
			}
			if !bytes.Contains(out.Bytes(), []byte(tt.wantOut)) {
				t.Errorf("stdout %q does not contain %q", out.String(), tt.wantOut)
			}
			if !bytes.Contains(errOut.Bytes(), []byte(tt.wantErr)) {
				t.Errorf("stderr %q does not contain %q", errOut.String(), tt.wantErr)
			}
		})
	}
}
