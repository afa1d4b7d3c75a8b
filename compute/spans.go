package compute

import (
	"go.opentelemetry.io/otel"

	"github.com/ringactor/ringactor/telemetry"
)

// defaultTracerProvider is otel's global tracer provider before anyone sets
// one: it makes only non-recording spans until otel.SetTracerProvider.
var defaultTracerProvider = otel.GetTracerProvider()

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
	return tp != defaultTracerProvider && telemetry.MakesSpans(tp)
}
