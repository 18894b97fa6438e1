// Command probe runs in a Pod of the real-node tests and reports, as JSON
// on stdout and in its termination message, what the container runtime
// enforced: its user and group, whether it could write its root filesystem
// and whether it could write the emptyDir at /scratch; and what the
// network gave it: whether it reached the kubernetes Service and the URL
// in $PROBE_URL (trying for up to $PROBE_URL_RETRY, a duration, if set).
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// Report is what the probe saw.
type Report struct {
	UID          int    `json:"uid"`
	GID          int    `json:"gid"`
	RootWrite    string `json:"rootWrite"`
	ScratchWrite string `json:"scratchWrite"`
	Service      string `json:"service"`
	URL          string `json:"url"`
}

func main() {
	r := Report{UID: os.Getuid(), GID: os.Getgid(), RootWrite: try("/probe-was-here"), ScratchWrite: try("/scratch/probe-was-here"),
		Service: dial(net.JoinHostPort(os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT"))),
		URL:     get(os.Getenv("PROBE_URL"))}
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

// dial opens a TCP connection to addr and returns "ok" or the last error,
// trying for up to 30 s: kube-proxy programs a Service's rules after it
// sees its endpoints, which on a node that just started (and a loaded
// machine) can come after the first Pod.
func dial(addr string) string {
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err == nil {
			c.Close()
			return "ok"
		}
		if time.Now().After(deadline) {
			return err.Error()
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// get fetches url and returns the start of its body or the error, trying
// again for up to $PROBE_URL_RETRY: a NetworkPolicy enforcer admits a new
// Pod once it has seen its address.
func get(url string) string {
	if url == "" {
		return ""
	}
	retry, _ := time.ParseDuration(os.Getenv("PROBE_URL_RETRY"))
	deadline := time.Now().Add(retry)
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	for err != nil && time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
		resp, err = c.Get(url)
	}
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	// The start of the body: the report must fit a termination message.
	b, err := io.ReadAll(io.LimitReader(resp.Body, 256))
	if err != nil {
		return err.Error()
	}
	return string(b)
}
