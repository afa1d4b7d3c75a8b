package actors

import (
	"context"
	"errors"
	"slices"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ringactor/ringactor/compute"
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/telemetry"
)

// TestExecuteTelemetry checks that the runtime's telemetry options reach its
// compute orchestrator: the executions counter, the duration histogram and
// the span around Execute, read with the SDK's manual reader and span
// recorder, and the orchestrator-wide profile, all through the Runtime.
func TestExecuteTelemetry(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer func() { _ = mp.Shutdown(context.Background()); _ = tp.Shutdown(context.Background()) }()
	rt := newTestRuntime(t, WithTelemetry(true), WithMeterProvider(mp), WithTracerProvider(tp))
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

// TestRuntimeComputeForwards: every compute method of the Runtime reaches
// its orchestrator (Runtime.Compute), and a closed runtime's orchestrator
// refuses calls with ErrRuntimeClosed (compute.ErrClosed).
func TestRuntimeComputeForwards(t *testing.T) {
	rt, err := NewRuntime(WithLogger(DiscardLogger()), WithTelemetry(false), WithMinDeviceWork(1e18))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	orc := rt.Compute()
	if orc == nil || rt.Pool() != orc.Pool() || len(rt.Backends()) != len(orc.Backends()) || len(rt.ComputeKernels()) != len(orc.Kernels()) {
		t.Fatal("the runtime's compute methods do not reach its orchestrator")
	}
	a := f32(t, 1, 2)
	out, err := rt.Execute(ctx, "add", bufs(a, a), nil)
	if err != nil || !slices.Equal(read[float32](t, out), []float32{2, 4}) {
		t.Fatalf("Execute: %v", err)
	}
	outs, err := rt.ExecuteBatch(ctx, "scale", [][]*gpu.UnifiedBuffer{bufs(a), bufs(a)}, WithScalars(3))
	if err != nil || len(outs) != 2 || read[float32](t, outs[1])[1] != 6 {
		t.Fatalf("ExecuteBatch: %v", err)
	}
	if m, err := rt.Map(ctx, "relu", bufs(f32(t, -1, 1)), 1); err != nil || read[float32](t, m)[0] != 0 {
		t.Fatalf("Map: %v", err)
	}
	if s, err := Reduce[float32](ctx, rt, "sum", a); err != nil || s != 3 {
		t.Fatalf("Reduce: %v %v", s, err)
	}
	if out, err := rt.Submit(ctx, "add", bufs(a, a), nil).Wait(ctx); err != nil || read[float32](t, out)[0] != 2 {
		t.Fatalf("Submit: %v", err)
	}
	if out, err := rt.NewPipeline().Then("scale", nil, WithScalars(-1)).Then("relu", nil).Run(ctx, a); err != nil || read[float32](t, out)[1] != 0 {
		t.Fatalf("Pipeline: %v", err)
	}
	if p := rt.Profile(); len(p.Kernels) != 4 { // add, scale, relu, sum
		t.Fatalf("profile of %d kernels: %+v", len(p.Kernels), p.Kernels)
	}
	if err := rt.Close(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = rt.Execute(ctx, "add", bufs(a, a), nil)
	if !errors.Is(err, ErrRuntimeClosed) || !errors.Is(err, compute.ErrClosed) {
		t.Fatalf("Execute after Close = %v, want ErrRuntimeClosed", err)
	}
	wantErr(t, rt.RegisterKernel(ctx), ErrRuntimeClosed)
}

// TestRuntimeExecuteAllocs: the forward adds no allocation to Execute (the
// orchestrator's own pin is compute's TestExecuteAllocs).
func TestRuntimeExecuteAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	rt, ctx := newTestRuntime(t, WithTelemetry(true)), testCtx(t)
	dst := f32(t, 0)
	in, into := bufs(f32(t, 1.5), f32(t, 2.25)), IntoBuffer(dst)
	add := func() {
		if _, err := rt.Execute(ctx, "add", in, nil, into); err != nil {
			t.Fatal(err)
		}
	}
	add()
	if got := testing.AllocsPerRun(200, add); got != 0 {
		t.Errorf("%v allocations per Runtime.Execute into a buffer, want 0", got)
	}
}

// BenchmarkRuntimeExecuteAddTiny is compute's BenchmarkExecuteAddTiny
// through the Runtime's forward: the two differ by the forward's cost.
func BenchmarkRuntimeExecuteAddTiny(b *testing.B) {
	rt, ctx := newTestRuntime(b), testCtx(b)
	dst := f32(b, 0)
	in, into := bufs(f32(b, 1.5), f32(b, 2.25)), IntoBuffer(dst)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rt.Execute(ctx, "add", in, nil, into); err != nil {
			b.Fatal(err)
		}
	}
}
