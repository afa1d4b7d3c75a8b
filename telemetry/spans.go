package telemetry

import (
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// MakesSpans reports whether tp makes spans worth creating: it was given
// and is not a no-op provider. Hot paths (a ring kernel's Request and Send,
// an orchestrator's Execute) create nothing, not even a non-recording span,
// when it is false, so they stay allocation-free.
func MakesSpans(tp trace.TracerProvider) bool {
	if tp == nil {
		return false
	}
	switch tp.(type) {
	case tracenoop.TracerProvider, *tracenoop.TracerProvider:
		return false
	}
	return true
}
