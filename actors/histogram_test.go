package actors

import (
	"bytes"
	"context"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ringactor/ringactor/supervision"
	"github.com/ringactor/ringactor/telemetry"
)

// TestKernelLatencyHistograms: after N requests through a kernel whose
// handler sleeps about a millisecond, the producer exports N messages in
// each of the kernel's histograms, with the handler's duration in the
// millisecond range, and Status reports the percentiles.
func TestKernelLatencyHistograms(t *testing.T) {
	prod := telemetry.NewProducer()
	reader := sdkmetric.NewManualReader(sdkmetric.WithProducer(prod))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	rt := newTestRuntime(t, WithTelemetry(true), WithMeterProvider(mp), WithTelemetryProducer(prod))
	ctx := testCtx(t)
	slow := func(_ context.Context, n num) (num, error) {
		deadline := time.Now().Add(time.Millisecond)
		for time.Now().Before(deadline) { // busy: the handler's own duration
		}
		return n, nil
	}
	k := mustLaunch(t, rt, NewStatelessKernel("slow", slow), true)
	const n = 20
	for i := range n {
		if _, err := k.Request(ctx, num{V: i}); err != nil {
			t.Fatal(err)
		}
	}
	// A slow kernel times every message (kernel_timing.go). A message's
	// handler duration and latency end just after its reply left: wait for
	// the last one's.
	for k.Telemetry().Latency.Count < n && ctx.Err() == nil {
		runtime.Gosched()
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	counts := map[string]metricdata.HistogramDataPoint[float64]{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok {
				for _, p := range h.DataPoints {
					if v, _ := p.Attributes.Value(telemetry.AttrKernel); v.AsString() == "slow" {
						counts[m.Name] = p
					}
				}
			}
		}
	}
	for _, name := range []string{telemetry.MessageLatency, telemetry.QueueDelay, telemetry.HandlerDuration} {
		if p, ok := counts[name]; !ok || p.Count != n {
			t.Errorf("%s: count %d (present %v), want %d", name, p.Count, ok, n)
		}
	}
	if h := counts[telemetry.HandlerDuration]; h.Sum < n*1e-3 || h.Sum > n*1.0 {
		t.Errorf("handler duration sum = %vs, want about %v × 1ms", h.Sum, n)
	}
	st, err := rt.Status("slow")
	if err != nil {
		t.Fatal(err)
	}
	if p50 := st.HandlerTime.Quantile(0.5); p50 < 750*time.Microsecond || p50 > 100*time.Millisecond {
		t.Errorf("handler p50 = %v, want about 1ms", p50)
	}
	if st.Latency.Quantile(0.99) < st.HandlerTime.Quantile(0.5) {
		t.Errorf("latency p99 %v below handler p50 %v", st.Latency.Quantile(0.99), st.HandlerTime.Quantile(0.5))
	}
}

// TestKernelHistogramsOffWithoutTelemetry: with telemetry off the loop reads
// no clock for histograms and Status reports none.
func TestKernelHistogramsOffWithoutTelemetry(t *testing.T) {
	rt := newTestRuntime(t, WithTelemetry(false))
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewStatelessKernel("echo", echoNum), true)
	if _, err := k.Request(ctx, num{V: 1}); err != nil {
		t.Fatal(err)
	}
	st := k.Telemetry()
	if st.Processed != 1 || st.Latency.Count != 0 || st.HandlerTime.Counts != nil {
		t.Errorf("telemetry off: processed %d, latency count %d", st.Processed, st.Latency.Count)
	}
}

// syncBuffer is a bytes.Buffer for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSupervisorLogsThroughRuntimeLogger: a strategy given without a logger
// reports the kernel it stops through the runtime's logger, not
// slog.Default.
func TestSupervisorLogsThroughRuntimeLogger(t *testing.T) {
	var def, own syncBuffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&def, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })

	strategy := supervision.NewStrategy()
	rt := newTestRuntime(t, WithLogger(slog.New(slog.NewTextHandler(&own, nil))), WithSupervisor(strategy))
	ctx := testCtx(t)
	boom := func(context.Context, num) (num, error) { panic("boom") }
	k := mustLaunch(t, rt, NewStatelessKernel("boom", boom, WithDecider(func(any) supervision.Directive { return supervision.Stop })), true)
	if _, err := k.Request(ctx, num{V: 1}); err == nil {
		t.Fatal("a panicking handler answered without an error")
	}
	select {
	case <-k.k.done():
	case <-ctx.Done():
		t.Fatal("the stopped kernel did not end")
	}
	if !strings.Contains(own.String(), "stopping kernel actor") || !strings.Contains(own.String(), "error=") {
		t.Errorf("runtime log = %q, want the stop with an error key", own.String())
	}
	if strings.Contains(def.String(), "kernel actor") {
		t.Errorf("logged to slog.Default: %q", def.String())
	}
}
