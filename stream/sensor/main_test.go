package sensor

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/internal/testutil/hangguard"
)

// TestMain fails the package when a test leaves goroutines behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(settled{m})
}

// settled runs the tests, then waits (up to two seconds) for Proto.Actor's
// dead-letter log throttle to end: a runtime's Close can post a dead letter,
// whose throttle goroutine lives one second, longer than goleak's retries.
// Anything else still running goleak reports.
type settled struct{ m *testing.M }

// Run implements goleak.TestingM.
func (s settled) Run() int {
	code := s.m.Run()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !goroutinesMention("protoactor-go/actor.NewDeadLetter.NewThrottle") {
			break
		}
	}
	return code
}

// goroutinesMention reports whether any goroutine's stack mentions fn.
func goroutinesMention(fn string) bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return bytes.Contains(buf[:n], []byte(fn))
		}
		buf = make([]byte, 2*len(buf))
	}
}

// testCtx is the test's hang guard (hangguard.Context): no wall-clock
// deadline of its own.
func testCtx(t testing.TB) context.Context { return hangguard.Context(t) }

// quiet are the runtime options of the tests: no logs, no telemetry.
func quiet() []actors.Option {
	return []actors.Option{actors.WithLogger(actors.DiscardLogger()), actors.WithTelemetry(false)}
}
