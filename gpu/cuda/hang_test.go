package cuda

import (
	"context"
	"testing"
	"time"
)

// hangMargin is how long before go test's -timeout a hang guard expires, so
// that the failure says what hung before the test binary panics.
const hangMargin = 30 * time.Second

// hangDeadline is when a wait that must end is a hang, not slowness:
// hangMargin before go test's -timeout, or an hour from now under -timeout
// 0. No test bounds a wait by the machine's speed: the simulated device runs
// host threads, and a loaded 2-core CI machine takes many times longer than
// an idle one.
func hangDeadline(t testing.TB) time.Time {
	if dt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := dt.Deadline(); ok {
			return d.Add(-hangMargin)
		}
	}
	return time.Now().Add(time.Hour)
}

// hangCtx is a context that expires at hangDeadline.
func hangCtx(t testing.TB) (context.Context, context.CancelFunc) {
	return context.WithDeadline(context.Background(), hangDeadline(t))
}
