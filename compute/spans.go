package compute

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// defaultTracerProvider is otel's global tracer provider before anyone sets
// one: it makes only non-recording spans until otel.SetTracerProvider.
var defaultTracerProvider = otel.GetTracerProvider()

// spansWanted reports whether tp makes spans: it was given and is not a
// no-op provider.
func spansWanted(tp trace.TracerProvider) bool {
	if tp == nil {
		return false
	}
	switch tp.(type) {
	case tracenoop.TracerProvider, *tracenoop.TracerProvider:
		return false
	}
	return true
}

// executionSpans reports whether an execution gets a "ringactor.execute"
// span: telemetry is on and the tracer provider (the one given, or else the
// global one at the time of the call, so that a later
// otel.SetTracerProvider takes effect) is not a no-op. A no-op provider
// would only make a non-recording span and a context for it, two
// allocations per Execute, for nothing.
func (orc *Orchestrator) executionSpans() bool {
	switch {
	case !orc.tracing:
		return false
	case orc.ownTP:
		return orc.spans
	}
	tp := otel.GetTracerProvider()
	return tp != defaultTracerProvider && spansWanted(tp)
}
