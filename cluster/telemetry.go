package cluster

import (
	"github.com/asynkron/protoactor-go/actor"
	"go.opentelemetry.io/otel/metric"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/telemetry"
)

// WithTelemetry makes the member report through the providers
// telemetry.Setup built: its runtime's instruments and its kernels' latency
// histograms, the cluster request duration histogram
// (telemetry.ClusterRequestDuration) and spans: SpanRequest around each
// request or send, whose W3C trace context travels in the wire envelope to
// the hosting member, which continues the trace with SpanHandle and the
// kernel's handler span, in the handler's context. A nil p changes nothing. Proto.Actor's own actor metrics are
// WithActorMetrics.
func WithTelemetry(p *telemetry.Providers) Option {
	return func(c *memberConfig) {
		if p != nil {
			c.runtimeOptions = append(c.runtimeOptions, actors.WithProviders(p))
			c.providers = p
		}
	}
}

// WithActorMetrics turns on Proto.Actor's own actor metrics
// (protoactor_actor_*: spawns, failures, mailbox lengths, message receive
// durations, by actor type) in the actor system Start creates. Proto.Actor
// creates those instruments from OpenTelemetry's GLOBAL meter provider, so
// make mp the global one (telemetry.Providers.SetGlobal). Note that
// Proto.Actor reads the system's address for every message it measures
// while its remote writes it as the member starts: the race detector
// reports that race in Proto.Actor's code. A nil mp changes nothing.
func WithActorMetrics(mp metric.MeterProvider) Option {
	return func(c *memberConfig) {
		if mp != nil {
			c.systemOptions = append(c.systemOptions, actor.WithMetricProviders(mp))
		}
	}
}
