package telemetry

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// config holds the providers New builds its meter and tracer from.
type config struct {
	mp       metric.MeterProvider
	tp       trace.TracerProvider
	producer *Producer
}

// Option configures New.
type Option func(*config)

// WithMeterProvider makes New take its meter from mp instead of
// otel.GetMeterProvider(). A nil mp keeps the default.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) {
		if mp != nil {
			c.mp = mp
		}
	}
}

// WithTracerProvider makes New take its tracer from tp instead of
// otel.GetTracerProvider(). A nil tp keeps the default.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) {
		if tp != nil {
			c.tp = tp
		}
	}
}

// WithProducer makes New register its Source with p, which exports the
// kernels' latency histograms at collection time; Close unregisters it. A
// nil p exports no histograms.
func WithProducer(p *Producer) Option {
	return func(c *config) { c.producer = p }
}

// newConfig applies opts over the global providers.
func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	return c
}
