package compute

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/internal/testutil/computetest"
	"github.com/ringactor/ringactor/internal/testutil/hangguard"
	"github.com/ringactor/ringactor/telemetry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// discardLogger writes nothing.
func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newTestOrchestrator makes a quiet orchestrator and closes it at the end
// of the test.
func newTestOrchestrator(t testing.TB, opts ...Option) *Orchestrator {
	t.Helper()
	orc, err := New(append([]Option{WithLogger(discardLogger())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := orc.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return orc
}

// testCtx is the test's hang guard (hangguard.Context): no wall-clock
// deadline of its own.
func testCtx(t testing.TB) context.Context { return hangguard.Context(t) }

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

// withTestTelemetry is the telemetry an actors.Runtime made with
// WithTelemetry(true) gives its orchestrator: instruments on mp (nil: otel's
// global meter provider), spans from tp (nil: the global tracer provider).
// They are closed at the end of the test.
func withTestTelemetry(t testing.TB, mp metric.MeterProvider, tp trace.TracerProvider) Option {
	t.Helper()
	var opts []telemetry.Option
	if mp != nil {
		opts = append(opts, telemetry.WithMeterProvider(mp))
	}
	if tp != nil {
		opts = append(opts, telemetry.WithTracerProvider(tp))
	}
	ins, err := telemetry.New(func() []telemetry.KernelStats { return nil }, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ins.Close(); err != nil {
			t.Errorf("closing telemetry: %v", err)
		}
	})
	return WithTelemetry(ins, tp)
}

// telemetryIf is withTestTelemetry(t, nil, nil) when on, no option otherwise.
func telemetryIf(t testing.TB, on bool) Option {
	if on {
		return withTestTelemetry(t, nil, nil)
	}
	return func(*config) {}
}
