package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WaitFor polls obj at key every interval until ok holds, and fails the
// test after timeout with msg and the object as last read (not as it was
// when the wait began).
func WaitFor[T client.Object](t testing.TB, c client.Reader, key client.ObjectKey, obj T, timeout, interval time.Duration, ok func(T) bool, msg string) T {
	t.Helper()
	if !assert.Eventually(t, func() bool {
		return c.Get(context.Background(), key, obj) == nil && ok(obj)
	}, timeout, interval, msg) {
		t.Fatalf("%s: last read %s: %+v", msg, key, obj)
	}
	return obj
}
