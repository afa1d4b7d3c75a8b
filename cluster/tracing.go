package cluster

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/ringactor/ringactor/internal/wire"
	"github.com/ringactor/ringactor/telemetry"
)

// Span names of cluster requests.
const (
	// SpanRequest is the caller's span of a cluster request or one-way send.
	SpanRequest = "ringactor.cluster.request"
	// SpanHandle is the hosting member's span of a request it handles; the
	// kernel's handler span ("ringactor.handle") is its child.
	SpanHandle = "ringactor.cluster.handle"
)

// memberTelemetry is a member's tracer and request duration histogram; nil
// without WithTelemetry.
type memberTelemetry struct {
	tracer trace.Tracer
	// noop: the tracer is OpenTelemetry's no-op one (no exporter is
	// configured), whose spans record nothing: a request that carries no
	// trace context to pass on gets no span on the hosting member.
	noop     bool
	duration metric.Float64Histogram
	prop     propagation.TraceContext
	// attrs holds each kind's attribute options of duration, by outcome
	// (ok, error): made once per kind, not at every request.
	attrs sync.Map // kind → *[2]metric.RecordOption
}

// durationAttrs returns the attribute options of a request of kind with
// the given outcome.
func (t *memberTelemetry) durationAttrs(kind string, failed bool) metric.RecordOption {
	v, ok := t.attrs.Load(kind)
	if !ok {
		v, _ = t.attrs.LoadOrStore(kind, &[2]metric.RecordOption{
			metric.WithAttributeSet(attribute.NewSet(attribute.String(telemetry.AttrKind, kind), attribute.String(telemetry.AttrOutcome, telemetry.OutcomeOK))),
			metric.WithAttributeSet(attribute.NewSet(attribute.String(telemetry.AttrKind, kind), attribute.String(telemetry.AttrOutcome, telemetry.OutcomeError))),
		})
	}
	o := v.(*[2]metric.RecordOption)
	if failed {
		return o[1]
	}
	return o[0]
}

// newMemberTelemetry builds the member's telemetry from p (nil for none).
func newMemberTelemetry(p *telemetry.Providers) *memberTelemetry {
	if p == nil {
		return nil
	}
	t := &memberTelemetry{tracer: p.TracerProvider.Tracer(telemetry.ScopeName)}
	_, t.noop = p.TracerProvider.(tracenoop.TracerProvider)
	h, err := p.MeterProvider.Meter(telemetry.ScopeName).Float64Histogram(telemetry.ClusterRequestDuration,
		metric.WithDescription("Duration of a cluster request as its caller sees it."),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(telemetry.DurationBounds()...))
	if err == nil {
		t.duration = h
	}
	return t
}

// wireCarrier is a propagation.TextMapCarrier over a wire envelope's trace
// context fields.
type wireCarrier struct{ w *wire.WireEnvelope }

func (c wireCarrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.w.GetTraceparent()
	case "tracestate":
		return c.w.GetTracestate()
	}
	return ""
}

func (c wireCarrier) Set(key, value string) {
	switch key {
	case "traceparent":
		c.w.Traceparent = value
	case "tracestate":
		c.w.Tracestate = value
	}
}

func (c wireCarrier) Keys() []string { return []string{"traceparent", "tracestate"} }

// tracedCall is call with the caller's span (SpanRequest), the W3C trace
// context injected into w, and the request's duration recorded, when the
// member has telemetry; call alone otherwise.
func (m *Member) tracedCall(ctx context.Context, kind, identity string, w *wire.WireEnvelope, wantReply bool) (any, error) {
	t := m.tel
	if t == nil {
		return m.call(ctx, kind, identity, w, wantReply)
	}
	start := time.Now()
	ctx, span := t.tracer.Start(ctx, SpanRequest, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String(telemetry.AttrKind, kind), attribute.String("identity", identity)))
	t.prop.Inject(ctx, wireCarrier{w})
	reply, err := m.call(ctx, kind, identity, w, wantReply)
	failed := err
	if we, ok := reply.(*wire.WireError); ok && err == nil {
		failed = fromWireError(we)
	}
	if failed != nil {
		span.RecordError(failed)
		span.SetStatus(codes.Error, failed.Error())
	}
	span.End()
	if t.duration != nil && wantReply {
		t.duration.Record(ctx, time.Since(start).Seconds(), t.durationAttrs(kind, failed != nil))
	}
	return reply, err
}

// startHandleSpan continues the trace w carries on the hosting member: it
// returns ctx with the member's SpanHandle span (the handler's context
// descends from it) and the span, or ctx and nil without telemetry, or
// with a no-op tracer when w carries no trace context. opts are the span's
// options (handleSpanOptions), made once per activation.
func (m *Member) startHandleSpan(ctx context.Context, w *wire.WireEnvelope, opts []trace.SpanStartOption) (context.Context, trace.Span) {
	t := m.tel
	if t == nil || (t.noop && w.GetTraceparent() == "") {
		return ctx, nil
	}
	ctx = t.prop.Extract(ctx, wireCarrier{w})
	return t.tracer.Start(ctx, SpanHandle, opts...)
}

// handleSpanOptions returns the options of the SpanHandle spans of the
// activation of kind whose kernel is named kernel, or nil when the member
// has no telemetry.
func (m *Member) handleSpanOptions(kind, kernel string) []trace.SpanStartOption {
	if m.tel == nil {
		return nil
	}
	return []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String(telemetry.AttrKind, kind), attribute.String(telemetry.AttrKernel, kernel))}
}

// endHandleSpan ends a span from startHandleSpan with err's status.
func endHandleSpan(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
