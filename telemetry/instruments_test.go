package telemetry

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func TestDisabled(t *testing.T) {
	ctx := context.Background()
	for name, inst := range map[string]*Instruments{"Disabled": Disabled(), "nil": nil} {
		t.Run(name, func(t *testing.T) {
			inst.RecordExecution(ctx, "k", "cuda", time.Second, 1, 1)
			_, span := inst.Tracer().Start(ctx, "op")
			if span.SpanContext().IsValid() {
				t.Error("disabled tracer produced a valid span")
			}
			span.End()
			c, err := inst.Meter().Int64Counter("x")
			if err != nil {
				t.Fatal(err)
			}
			c.Add(ctx, 1)
			if err := inst.Close(); err != nil {
				t.Fatal(err)
			}
			if err := inst.Close(); err != nil {
				t.Fatal(err)
			}
			inst.RecordExecution(ctx, "k", "cuda", time.Second, 1, 1)
		})
	}
}

func TestDisabledDoesNotAllocate(t *testing.T) {
	inst := Disabled()
	ctx := context.Background()
	if allocs := testing.AllocsPerRun(100, func() {
		inst.RecordExecution(ctx, "k", "cuda", time.Millisecond, 1, 1)
	}); allocs != 0 {
		t.Fatalf("disabled RecordExecution allocates %v times", allocs)
	}
}

func TestTracer(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	inst, err := New(nil, WithTracerProvider(tp))
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()

	_, span := inst.Tracer().Start(context.Background(), "launch")
	span.End()
	ended := rec.Ended()
	if len(ended) != 1 {
		t.Fatalf("%d spans, want 1", len(ended))
	}
	if got := ended[0].InstrumentationScope().Name; got != ScopeName {
		t.Errorf("span scope = %q, want %q", got, ScopeName)
	}
}

func TestDefaultProviders(t *testing.T) {
	prevMP, prevTP := otel.GetMeterProvider(), otel.GetTracerProvider()
	t.Cleanup(func() {
		otel.SetMeterProvider(prevMP)
		otel.SetTracerProvider(prevTP)
	})
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	otel.SetMeterProvider(mp)
	otel.SetTracerProvider(tp)

	// Nil options and nil providers keep the global defaults.
	inst, err := New(nil, nil, WithMeterProvider(nil), WithTracerProvider(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	inst.RecordExecution(context.Background(), "k", "cpu", time.Millisecond, 0, 0)
	if _, ok := collect(t, r)[KernelExecutions]; !ok {
		t.Error("global meter provider not used")
	}
	_, span := inst.Tracer().Start(context.Background(), "op")
	span.End()
	if len(rec.Ended()) != 1 {
		t.Error("global tracer provider not used")
	}
}
