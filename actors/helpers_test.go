package actors

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/internal/testutil/computetest"
	"github.com/ringactor/ringactor/internal/testutil/hangguard"
	"github.com/ringactor/ringactor/messages"
	"github.com/ringactor/ringactor/supervision"
)

// Test message types.
type (
	addReq struct {
		A, B []float32
	}
	addResp struct {
		Sum []float32
	}
	num   struct{ V int }
	total struct{ Sum int }
	label struct{ S string }
)

func init() {
	messages.MustRegister[seq]("test.seq")
	messages.MustRegister[addReq]("test.add.request")
	messages.MustRegister[addResp]("test.add.response")
	messages.MustRegister[num]("test.num")
	messages.MustRegister[total]("test.total")
	messages.MustRegister[label]("test.label")
	messages.MustRegister[*num]("test.num.ptr")
}

func TestMain(m *testing.M) {
	// Proto.Actor's dead-letter log throttle runs a goroutine for one second
	// after a dead letter (a runtime's Close can post one): it ends by
	// itself and is not a leak, but a short run can finish before it does.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"))
}

// newTestRuntime starts a quiet runtime with fast restarts and closes it at
// the end of the test.
func newTestRuntime(t testing.TB, opts ...Option) *Runtime {
	t.Helper()
	base := []Option{
		WithLogger(DiscardLogger()),
		WithTelemetry(false),
		WithSupervisor(supervision.NewStrategy(
			supervision.WithLogger(DiscardLogger()),
			supervision.WithBackoff(supervision.Backoff{Initial: 50 * time.Microsecond, Max: time.Millisecond, Multiplier: 2}),
		)),
	}
	rt, err := NewRuntime(append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := hangCtx(t)
		defer cancel()
		if err := rt.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return rt
}

// testCtx is the test's hang guard (hangguard.Context): no wall-clock
// deadline of its own.
func testCtx(t testing.TB) context.Context { return hangguard.Context(t) }

// hangCtx is a context for a wait that must end: it expires when the wait
// is a hang, not when the machine is slow — hangguard.Margin before go test's
// own -timeout (so that the failure says what hung, before the binary
// panics), never under -timeout 0. No test bounds a wait by the machine's
// speed: a loaded 2-core CI machine takes many times longer than an idle one.
func hangCtx(t testing.TB) (context.Context, context.CancelFunc) {
	if d, ok := hangDeadline(t); ok {
		return context.WithDeadline(context.Background(), d)
	}
	return context.WithCancel(context.Background())
}

// hangDeadline is when hangCtx expires; false under -timeout 0.
func hangDeadline(t testing.TB) (time.Time, bool) {
	if dt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := dt.Deadline(); ok {
			return d.Add(-hangguard.Margin), true
		}
	}
	return time.Time{}, false
}

// hangWait is hangCtx's bound as a duration, for Proto.Actor's
// RequestFuture (an hour under -timeout 0, or in a benchmark).
func hangWait(t testing.TB) time.Duration {
	if d, ok := hangDeadline(t); ok {
		return time.Until(d)
	}
	return time.Hour
}

func vectorAdd(_ context.Context, r addReq) (addResp, error) {
	if len(r.A) != len(r.B) {
		return addResp{}, fmt.Errorf("length mismatch: %d vs %d", len(r.A), len(r.B))
	}
	out := make([]float32, len(r.A))
	for i := range r.A {
		out[i] = r.A[i] + r.B[i]
	}
	return addResp{Sum: out}, nil
}

// runningSum is a stateful kernel: its state resets when it restarts.
func runningSum() Handler[num, total] {
	sum := 0
	return func(_ context.Context, n num) (total, error) {
		sum += n.V
		return total{Sum: sum}, nil
	}
}

func mustLaunch[Req, Resp any](t testing.TB, rt *Runtime, def *KernelDef[Req, Resp], activate bool) *Kernel[Req, Resp] {
	t.Helper()
	k, err := Launch(testCtx(t), rt, def)
	if err != nil {
		t.Fatalf("Launch %s: %v", def.ID(), err)
	}
	if activate {
		if err := k.Activate(testCtx(t)); err != nil {
			t.Fatalf("Activate %s: %v", def.ID(), err)
		}
	}
	return k
}

// The compute API's test helpers (internal/testutil/computetest, shared
// by actors' and compute's tests) by their short names.
var (
	f32     = computetest.F32
	bufs    = computetest.Bufs
	wantErr = computetest.WantErr
)

func read[T gpu.Number](t testing.TB, b *gpu.UnifiedBuffer) []T {
	t.Helper()
	return computetest.Read[T](t, b)
}

// waitTurn lets other goroutines run while a test polls a condition that
// another goroutine is about to make true (an admission, a counter).
func waitTurn() { runtime.Gosched() }
