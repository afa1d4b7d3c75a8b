package compute

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ringactor/ringactor/telemetry"
)

// TestExecuteTelemetry checks the executions counter, the duration
// histogram and the span around Execute, read with the SDK's manual reader
// and span recorder, and the orchestrator-wide profile.
func TestExecuteTelemetry(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer func() { _ = mp.Shutdown(context.Background()); _ = tp.Shutdown(context.Background()) }()
	rt := newTestOrchestrator(t, withTestTelemetry(t, mp, tp))
	ctx := testCtx(t)
	for i := 0; i < 5; i++ {
		out, err := rt.Execute(ctx, "add", bufs(f32(t, 1, 2), f32(t, 3, 4)), nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = out.Free()
	}
	if _, err := rt.Execute(ctx, "add", bufs(f32(t, 1)), nil); err == nil {
		t.Fatal("bad call succeeded")
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	var execs int64
	var durations uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				if m.Name == telemetry.KernelExecutions {
					for _, p := range d.DataPoints {
						execs += p.Value
					}
				}
			case metricdata.Histogram[float64]:
				if m.Name == telemetry.KernelDuration {
					for _, p := range d.DataPoints {
						durations += p.Count
					}
				}
			}
		}
	}
	if execs != 5 || durations != 5 {
		t.Fatalf("executions %d, durations %d; want 5 each (argument errors are not executions)", execs, durations)
	}
	ended := spans.Ended()
	if len(ended) != 5 || ended[0].Name() != "ringactor.execute" {
		t.Fatalf("%d spans", len(ended))
	}
	p := rt.Profile()
	if len(p.Kernels) != 1 || p.Kernels[0].Calls != 5 || p.Kernels[0].ByBackend["cpu"] != 5 || p.Kernels[0].AvgTime() <= 0 {
		t.Fatalf("%+v", p)
	}
	if p.Pool.Hits+p.Pool.Misses < 5 {
		t.Fatalf("pool %+v", p.Pool)
	}
}
