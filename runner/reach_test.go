package main

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestReach(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusUnauthorized) // a refusal is still an answer
	}))
	defer srv.Close()
	var out, errOut bytes.Buffer
	if code := run([]string{"reach", srv.URL + "/artifact?token=secret"}, &out, &errOut); code != 0 {
		t.Fatalf("reach a server that answers: exit %d, stderr %q", code, errOut.String())
	}
	if !strings.Contains(out.String(), "HTTP 401") || strings.Contains(out.String(), "secret") {
		t.Errorf("stdout %q: want the status, without the URL's query", out.String())
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/artifact?token=secret"
	l.Close()
	defer func(d time.Duration) { reachFor = d }(reachFor)
	reachFor = 2 * time.Second // two attempts
	out.Reset()
	errOut.Reset()
	if code := run([]string{"reach", closed}, &out, &errOut); code != 3 {
		t.Fatalf("reach a closed port: exit %d, want 3", code)
	}
	if !strings.Contains(errOut.String(), "cannot reach") || strings.Contains(errOut.String(), "secret") {
		t.Errorf("stderr %q: want why, without the URL's query", errOut.String())
	}
	if code := run([]string{"reach"}, &out, &errOut); code != 2 {
		t.Errorf("reach without a URL: exit %d, want 2", code)
	}
}
