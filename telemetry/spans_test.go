package telemetry

import (
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

func TestMakesSpans(t *testing.T) {
	sdk := sdktrace.NewTracerProvider()
	defer func() { _ = sdk.Shutdown(t.Context()) }()
	noop := tracenoop.NewTracerProvider()
	for _, c := range []struct {
		name string
		got  bool
		want bool
	}{
		{"nil", MakesSpans(nil), false},
		{"noop value", MakesSpans(noop), false},
		{"noop pointer", MakesSpans(&noop), false},
		{"sdk", MakesSpans(sdk), true},
	} {
		if c.got != c.want {
			t.Errorf("%s: MakesSpans = %v, want %v", c.name, c.got, c.want)
		}
	}
}
