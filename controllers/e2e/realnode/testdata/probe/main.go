// Command probe runs in a Pod of the real-node tests and reports, as JSON
// on stdout and in its termination message, what the container runtime
// enforced: its user and group, whether it could write its root filesystem
// and whether it could write the emptyDir at /scratch.
package main

import (
	"encoding/json"
	"fmt"
	"os"
)

// Report is what the probe saw.
type Report struct {
	UID          int    `json:"uid"`
	GID          int    `json:"gid"`
	RootWrite    string `json:"rootWrite"`
	ScratchWrite string `json:"scratchWrite"`
}

func main() {
	r := Report{UID: os.Getuid(), GID: os.Getgid(), RootWrite: try("/probe-was-here"), ScratchWrite: try("/scratch/probe-was-here")}
	b, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))
	_ = os.WriteFile("/dev/termination-log", b, 0o644)
}

// try writes a file and returns "ok" or the error.
func try(path string) string {
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		return err.Error()
	}
	return "ok"
}
