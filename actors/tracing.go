package actors

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/telemetry"
)

// Span names of ring kernel messages.
const (
	// SpanRequest is a Request's span, from admission to reply.
	SpanRequest = "ringactor.request"
	// SpanSend is a Send's span: its admission.
	SpanSend = "ringactor.send"
	// SpanHandle is the span of a handler's execution; its context is the
	// handler's. It is a child of the requester's span (a Request's, or a
	// cluster request's on the hosting member) and exists only when that
	// parent is sampled.
	SpanHandle = "ringactor.handle"
)

// tracedRequest is request inside a SpanRequest span; the handler's context
// descends from it.
func (k *kernel[Req, Resp]) tracedRequest(ctx context.Context, msg Req) (Resp, error) {
	ctx, span := k.rt.tracer.Start(ctx, SpanRequest, trace.WithAttributes(attribute.String(telemetry.AttrKernel, k.def.id)))
	resp, err := k.request(ctx, msg)
	endSpan(span, err)
	return resp, err
}

// tracedSend is send inside a SpanSend span (its admission: the handler
// of a sent message runs in the kernel's context, not the sender's).
func (k *kernel[Req, Resp]) tracedSend(ctx context.Context, msg Req) (uint64, error) {
	ctx, span := k.rt.tracer.Start(ctx, SpanSend, trace.WithAttributes(attribute.String(telemetry.AttrKernel, k.def.id)))
	id, err := k.send(ctx, msg)
	endSpan(span, err)
	return id, err
}

// endSpan ends span with err's status.
func endSpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// invokeSpan runs the handler as invoke does, inside a SpanHandle span when
// the runtime makes spans and the message's context carries a sampled
// span; the handler's context is the span's.
func (k *kernel[Req, Resp]) invokeSpan(h Handler[Req, Resp], s *slot[Req, Resp]) (Resp, *gpu.ExecutionError) {
	if !k.rt.spans || !trace.SpanContextFromContext(s.ctx).IsSampled() {
		return k.invoke(s.ctx, h, s)
	}
	ctx, span := k.rt.tracer.Start(s.ctx, SpanHandle, trace.WithAttributes(attribute.String(telemetry.AttrKernel, k.def.id)))
	resp, ee := k.invoke(ctx, h, s)
	if ee != nil {
		endSpan(span, ee)
	} else {
		span.End()
	}
	return resp, ee
}
