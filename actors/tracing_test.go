package actors

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/ringactor/ringactor/telemetry"
)

// TestRequestAndHandlerSpans: with a tracer provider, a Request makes a
// SpanRequest span and the handler runs in a SpanHandle child span of the
// same trace, which is the handler's context.
func TestRequestAndHandlerSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	rt := newTestRuntime(t, WithTelemetry(true), WithTracerProvider(tp))
	ctx := testCtx(t)
	seen := make(chan trace.SpanContext, 1)
	k := mustLaunch(t, rt, NewStatelessKernel("traced", func(ctx context.Context, n num) (num, error) {
		seen <- trace.SpanContextFromContext(ctx)
		return n, nil
	}), true)
	if _, err := k.Request(ctx, num{V: 1}); err != nil {
		t.Fatal(err)
	}
	inHandler := <-seen
	spans := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		spans[s.Name()] = s
	}
	req, handle := spans[SpanRequest], spans[SpanHandle]
	if req == nil || handle == nil {
		t.Fatalf("spans %v, want %s and %s", spans, SpanRequest, SpanHandle)
	}
	if handle.Parent().SpanID() != req.SpanContext().SpanID() || handle.SpanContext().TraceID() != req.SpanContext().TraceID() {
		t.Errorf("handler span %v is not a child of the request span %v", handle.Parent(), req.SpanContext())
	}
	if inHandler.SpanID() != handle.SpanContext().SpanID() {
		t.Errorf("the handler's context carries span %v, want the handler span %v", inHandler.SpanID(), handle.SpanContext().SpanID())
	}
	// A Send has its own span.
	if _, err := k.Send(ctx, num{V: 2}); err != nil {
		t.Fatal(err)
	}
	<-seen
	if _, err := k.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range rec.Ended() {
		found = found || s.Name() == SpanSend
	}
	if !found {
		t.Errorf("no %s span", SpanSend)
	}
}

// TestNoSpansWithNoopTracer: a no-op tracer provider (what telemetry.Setup
// gives when no traces are exported) makes no spans and the handler's
// context carries none.
func TestNoSpansWithNoopTracer(t *testing.T) {
	rt := newTestRuntime(t, WithTelemetry(true), WithTracerProvider(tracenoop.NewTracerProvider()))
	if rt.spans {
		t.Fatal("a no-op tracer provider turned message spans on")
	}
	ctx := testCtx(t)
	seen := make(chan trace.SpanContext, 1)
	k := mustLaunch(t, rt, NewStatelessKernel("untraced", func(ctx context.Context, n num) (num, error) {
		seen <- trace.SpanContextFromContext(ctx)
		return n, nil
	}), true)
	if _, err := k.Request(ctx, num{V: 1}); err != nil {
		t.Fatal(err)
	}
	if sc := <-seen; sc.IsValid() {
		t.Errorf("the handler's context carries a span %v", sc)
	}
}

// TestRequestAllocatesNothingWithTelemetry: with telemetry on (an SDK meter
// provider, the histogram producer, Setup's no-op tracer) a Request still
// allocates nothing.
func TestRequestAllocatesNothingWithTelemetry(t *testing.T) {
	prod := telemetry.NewProducer()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader(sdkmetric.WithProducer(prod))))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	rt := newTestRuntime(t, WithTelemetry(true), WithMeterProvider(mp), WithTracerProvider(tracenoop.NewTracerProvider()), WithTelemetryProducer(prod))
	k := mustLaunch(t, rt, NewStatelessKernel("echo", echoNum), true)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(2000, func() {
		if _, err := k.Request(ctx, num{V: 1}); err != nil {
			t.Fatal(err)
		}
	})
	if k.Telemetry().Latency.Count == 0 {
		t.Fatal("no latency recorded: telemetry is not on")
	}
	if !raceEnabled && allocs != 0 {
		t.Errorf("Request allocates %v times per call with telemetry on", allocs)
	}
}
