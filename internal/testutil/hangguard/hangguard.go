// Package hangguard gives tests a context that guards against hangs only:
// it expires Margin before go test's -timeout (never under -timeout 0), not
// when the machine is slow, and ends with the test. A loaded 2-core CI
// machine takes many times longer than an idle one, so no test waits by a
// wall-clock deadline of its own.
package hangguard

import (
	"context"
	"testing"
	"time"
)

// Margin is how long before go test's -timeout a hang guard expires, so
// that the test fails with its own message instead of the binary's panic.
const Margin = 30 * time.Second

// Context returns the hang guard of t: cancelled when t ends, and expiring
// Margin before t's deadline when it has one.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	if dt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := dt.Deadline(); ok {
			cancel()
			ctx, cancel = context.WithDeadline(context.Background(), d.Add(-Margin))
		}
	}
	t.Cleanup(cancel)
	return ctx
}

// Until polls cond every few milliseconds until it holds, and fails t with
// what it was waiting for when ctx (a hang guard) ends first.
func Until(ctx context.Context, t testing.TB, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-tick.C:
		}
	}
}
