package cluster

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/ringactor/ringactor/internal/wire"
	"github.com/ringactor/ringactor/telemetry"
)

// traceparent of a sampled remote span.
const testTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestHandleSpanWithNoopTracer(t *testing.T) {
	mp := sdkmetric.NewMeterProvider()
	defer mp.Shutdown(context.Background())
	m := &Member{tel: newMemberTelemetry(&telemetry.Providers{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: mp})}
	if !m.tel.noop {
		t.Fatal("the no-op tracer provider is not recognised")
	}
	opts := m.handleSpanOptions("k", "k/id")
	ctx := context.Background()
	// No trace context to pass on: no span, the context as it was.
	got, span := m.startHandleSpan(ctx, &wire.WireEnvelope{}, opts)
	if span != nil || got != ctx {
		t.Fatalf("a request without trace context got span %v", span)
	}
	// A trace context comes in: the handler's context carries it on, so
	// that the handler's own requests continue the trace.
	got, span = m.startHandleSpan(ctx, &wire.WireEnvelope{Traceparent: testTraceparent}, opts)
	if span == nil {
		t.Fatal("no span for a request with trace context")
	}
	endHandleSpan(span, nil)
	if id := trace.SpanContextFromContext(got).TraceID().String(); id != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("handler context's trace id %q", id)
	}
}

func TestHandleSpanRecordedWithAttributes(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	mp := sdkmetric.NewMeterProvider()
	defer mp.Shutdown(context.Background())
	m := &Member{tel: newMemberTelemetry(&telemetry.Providers{TracerProvider: tp, MeterProvider: mp})}
	if m.tel.noop {
		t.Fatal("an SDK tracer provider taken for the no-op one")
	}
	opts := m.handleSpanOptions("k", "k/id")
	for _, w := range []*wire.WireEnvelope{{}, {Traceparent: testTraceparent}} {
		_, span := m.startHandleSpan(context.Background(), w, opts)
		if span == nil {
			t.Fatal("no span with a recording tracer")
		}
		endHandleSpan(span, nil)
	}
	ended := rec.Ended()
	if len(ended) != 2 {
		t.Fatalf("%d spans ended, want 2", len(ended))
	}
	for _, s := range ended {
		if s.Name() != SpanHandle || s.SpanKind() != trace.SpanKindServer {
			t.Errorf("span %q of kind %v", s.Name(), s.SpanKind())
		}
		attrs := map[string]string{}
		for _, a := range s.Attributes() {
			attrs[string(a.Key)] = a.Value.String()
		}
		if attrs[telemetry.AttrKind] != "k" || attrs[telemetry.AttrKernel] != "k/id" {
			t.Errorf("span attributes %v", attrs)
		}
	}
	if got := ended[1].Parent().TraceID().String(); got != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("the span of the request with trace context has parent trace %q", got)
	}
}
