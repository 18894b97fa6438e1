package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"time"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/runner/internal/artifact"
)

// reachFor bounds `runner reach` (a variable for tests); each attempt has
// reachAttempt, and attempts are reachPause apart: a NetworkPolicy
// enforcer may admit a new Pod's traffic a moment after it starts, as a
// run's fetch retries.
var reachFor = 20 * time.Second

const (
	reachAttempt = 5 * time.Second
	reachPause   = time.Second
)

// reach asks url with HEAD, as a run reaches its artifact's server, until
// it answers or reachFor passes: any HTTP answer, even a refusal, means
// the network lets the runner through.
func reach(url string, stdout, stderr io.Writer) int {
	if _, err := neturl.ParseRequestURI(url); err != nil {
		fmt.Fprintf(stderr, "runner reach: %s is not a URL\n", artifact.Redact(url))
		return magosv1.ExitUsage
	}
	deadline := time.Now().Add(reachFor)
	for {
		status, err := ask(url)
		if err == nil {
			fmt.Fprintf(stdout, "reached %s: HTTP %s\n", artifact.Redact(url), status)
			return magosv1.ExitSucceeded
		}
		if time.Now().Add(reachPause).After(deadline) {
			fmt.Fprintf(stderr, "cannot reach %s: %v\n", artifact.Redact(url), err)
			return magosv1.ExitUnreachable
		}
		time.Sleep(reachPause)
	}
}

// ask sends one HEAD request and returns the answer's status; its error
// leaves out the URL, which may hold a token.
func ask(url string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), reachAttempt)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var ue *neturl.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", err
	}
	resp.Body.Close()
	return resp.Status, nil
}
