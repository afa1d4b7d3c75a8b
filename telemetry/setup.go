package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	promexporter "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// Resource attribute keys Setup adds.
const (
	// ResourceCluster is the cluster a member belongs to (WithCluster).
	ResourceCluster = "ringactor.cluster"
	// ResourceMemberAddress is a member's remote address (WithMemberAddress).
	ResourceMemberAddress = "ringactor.member.address"
	// DefaultServiceName is the service.name of Setup's resource unless
	// WithServiceName or OTEL_SERVICE_NAME says otherwise.
	DefaultServiceName = "ringactor"
)

// ErrBadExporter is returned by Setup when OTEL_METRICS_EXPORTER,
// OTEL_TRACES_EXPORTER or an OTLP protocol variable names something it does
// not support.
var ErrBadExporter = errors.New("ringactor/telemetry: unsupported exporter")

// SetupOption configures Setup.
type SetupOption func(*setupConfig)

type setupConfig struct {
	service    string
	attrs      []attribute.KeyValue
	prometheus bool
	getenv     func(string) string
}

// WithServiceName sets the resource's service.name (default
// DefaultServiceName); OTEL_SERVICE_NAME, when set, wins.
func WithServiceName(name string) SetupOption {
	return func(c *setupConfig) { c.service = name }
}

// WithResourceAttributes adds attributes to the resource of every signal.
func WithResourceAttributes(kv ...attribute.KeyValue) SetupOption {
	return func(c *setupConfig) { c.attrs = append(c.attrs, kv...) }
}

// WithCluster adds the resource attribute ResourceCluster.
func WithCluster(name string) SetupOption {
	return WithResourceAttributes(attribute.String(ResourceCluster, name))
}

// WithMemberAddress adds the resource attribute ResourceMemberAddress.
func WithMemberAddress(addr string) SetupOption {
	return WithResourceAttributes(attribute.String(ResourceMemberAddress, addr))
}

// WithPrometheus adds a Prometheus exporter reader to the meter provider;
// Providers.PrometheusHandler then serves its registry (with the Go runtime
// and process collectors) in the Prometheus text format.
func WithPrometheus() SetupOption { return func(c *setupConfig) { c.prometheus = true } }

// Providers are the OpenTelemetry SDK providers Setup built. Hand them to a
// runtime or member (their InstrumentOptions, or the runtime's and
// cluster's telemetry options) and call Shutdown when the process ends.
type Providers struct {
	// MeterProvider is the SDK meter provider: every reader Setup made
	// (OTLP push, console, Prometheus) has Producer attached.
	MeterProvider *sdkmetric.MeterProvider
	// TracerProvider is an SDK tracer provider with the configured span
	// exporter, or a no-op provider when no traces are exported.
	TracerProvider trace.TracerProvider
	// Producer exports the ring kernels' latency histograms.
	Producer *Producer
	// Resource is the resource every signal carries.
	Resource *resource.Resource
	// Propagator carries W3C trace context and baggage.
	Propagator propagation.TextMapPropagator

	prom     http.Handler
	mu       sync.Mutex
	shutdown []func(context.Context) error
}

// Setup builds OpenTelemetry SDK providers from the standard OTEL_*
// environment, the way an operator configures any OpenTelemetry service:
//
//   - OTEL_METRICS_EXPORTER: otlp, console, none (comma-separated for
//     several). Unset, it is otlp when OTEL_EXPORTER_OTLP_ENDPOINT or
//     OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is set and none otherwise (so a
//     process with no collector does not log export failures).
//   - OTEL_TRACES_EXPORTER: otlp, console, none, with the same default;
//     the span exporter is built by the OpenTelemetry contrib autoexport.
//   - OTEL_EXPORTER_OTLP_[METRICS_|TRACES_]PROTOCOL: http/protobuf
//     (default) or grpc; endpoints, headers, TLS and timeouts from the
//     standard OTEL_EXPORTER_OTLP_* variables, read by the exporters.
//   - OTEL_METRIC_EXPORT_INTERVAL, OTEL_BSP_*, OTEL_TRACES_SAMPLER[_ARG]:
//     read by the SDK.
//   - OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES: the resource.
//   - OTEL_SDK_DISABLED=true: no-op tracing and a meter provider with only
//     the Prometheus reader (when asked for).
//
// Setup changes no global; call SetGlobal for that.
func Setup(ctx context.Context, opts ...SetupOption) (*Providers, error) {
	c := setupConfig{service: DefaultServiceName, getenv: os.Getenv}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	res, err := c.resource(ctx)
	if err != nil {
		return nil, err
	}
	p := &Providers{
		Producer:   NewProducer(),
		Resource:   res,
		Propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	}
	disabled := strings.EqualFold(strings.TrimSpace(c.getenv("OTEL_SDK_DISABLED")), "true")
	mopts := []sdkmetric.Option{sdkmetric.WithResource(res)}
	if c.prometheus {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		exp, err := promexporter.New(promexporter.WithRegisterer(reg), promexporter.WithProducer(p.Producer))
		if err != nil {
			return nil, fmt.Errorf("ringactor/telemetry: prometheus exporter: %w", err)
		}
		mopts = append(mopts, sdkmetric.WithReader(exp))
		p.prom = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	}
	if !disabled {
		readers, err := c.metricReaders(ctx, p.Producer)
		if err != nil {
			return nil, err
		}
		for _, r := range readers {
			mopts = append(mopts, sdkmetric.WithReader(r))
		}
	}
	p.MeterProvider = sdkmetric.NewMeterProvider(mopts...)
	p.shutdown = append(p.shutdown, p.MeterProvider.Shutdown)
	p.TracerProvider = tracenoop.NewTracerProvider()
	if !disabled && c.exporting("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
		exp, err := autoexport.NewSpanExporter(ctx)
		if err != nil {
			_ = p.Shutdown(ctx)
			return nil, fmt.Errorf("%w: traces: %w", ErrBadExporter, err)
		}
		if !autoexport.IsNoneSpanExporter(exp) {
			tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(exp))
			p.TracerProvider = tp
			p.shutdown = append(p.shutdown, tp.Shutdown)
		}
	}
	return p, nil
}

// exporting reports whether the signal whose exporter variable is envKey
// exports anything: the variable says so, or it is unset and an OTLP
// endpoint (general or the signal's, endpointKey) is.
func (c *setupConfig) exporting(envKey, endpointKey string) bool {
	if v := strings.TrimSpace(c.getenv(envKey)); v != "" {
		return v != "none"
	}
	return c.getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || c.getenv(endpointKey) != ""
}

// metricReaders builds the push readers OTEL_METRICS_EXPORTER asks for,
// each with the producer attached.
func (c *setupConfig) metricReaders(ctx context.Context, prod *Producer) ([]sdkmetric.Reader, error) {
	if !c.exporting("OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") {
		return nil, nil
	}
	names, err := metricExporters(c.getenv("OTEL_METRICS_EXPORTER"))
	if err != nil {
		return nil, err
	}
	var readers []sdkmetric.Reader
	fail := func(err error) ([]sdkmetric.Reader, error) {
		for _, r := range readers {
			_ = r.Shutdown(ctx)
		}
		return nil, err
	}
	for _, n := range names {
		var exp sdkmetric.Exporter
		var err error
		if n == "otlp" {
			exp, err = c.otlpMetricExporter(ctx)
		} else {
			exp, err = stdoutmetric.New()
		}
		if err != nil {
			return fail(fmt.Errorf("ringactor/telemetry: metric exporter %q: %w", n, err))
		}
		readers = append(readers, sdkmetric.NewPeriodicReader(exp, sdkmetric.WithProducer(prod)))
	}
	return readers, nil
}

// metricExporters parses OTEL_METRICS_EXPORTER's value v, a comma-separated
// list: the exporters to build, "otlp" or "console", each once, in the
// order named. "none" and blank entries name none; a blank v is "otlp" (the
// caller has found that metrics are exported). Another name is
// ErrBadExporter.
func metricExporters(v string) ([]string, error) {
	if strings.TrimSpace(v) == "" {
		return []string{"otlp"}, nil
	}
	var names []string
	for _, n := range strings.Split(v, ",") {
		switch n = strings.TrimSpace(n); n {
		case "", "none":
		case "otlp", "console":
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		default:
			return nil, fmt.Errorf("%w: OTEL_METRICS_EXPORTER=%q (want otlp, console or none; Prometheus is served by the admin endpoint)", ErrBadExporter, n)
		}
	}
	return names, nil
}

// otlpProtocol returns the OTLP metric protocol that the values of
// OTEL_EXPORTER_OTLP_METRICS_PROTOCOL and OTEL_EXPORTER_OTLP_PROTOCOL (the
// first set wins) name: "http/protobuf" (the default) or "grpc"; another is
// ErrBadExporter.
func otlpProtocol(metricsProto, proto string) (string, error) {
	if metricsProto != "" {
		proto = metricsProto
	}
	switch proto {
	case "", "http/protobuf":
		return "http/protobuf", nil
	case "grpc":
		return proto, nil
	}
	return "", fmt.Errorf("%w: OTLP protocol %q (want http/protobuf or grpc)", ErrBadExporter, proto)
}

// otlpMetricExporter builds the OTLP metric exporter of the configured
// protocol.
func (c *setupConfig) otlpMetricExporter(ctx context.Context) (sdkmetric.Exporter, error) {
	proto, err := otlpProtocol(c.getenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"), c.getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	if err != nil {
		return nil, err
	}
	if proto == "grpc" {
		return otlpmetricgrpc.New(ctx)
	}
	return otlpmetrichttp.New(ctx)
}

// resource builds the resource: service name, SDK, host and process, then
// OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES, then the options'
// attributes.
func (c *setupConfig) resource(ctx context.Context) (*resource.Resource, error) {
	base := []attribute.KeyValue{attribute.String("service.name", c.service)}
	res, err := resource.New(ctx,
		resource.WithAttributes(base...),
		resource.WithTelemetrySDK(),
		resource.WithHost(),
		resource.WithProcessPID(),
		resource.WithDetectors(envDetector{c.getenv}),
		resource.WithAttributes(c.attrs...))
	if err != nil {
		return nil, fmt.Errorf("ringactor/telemetry: resource: %w", err)
	}
	return res, nil
}

// envDetector reads OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME through
// getenv, as resource.WithFromEnv does through os.Getenv: key=value pairs
// separated by commas, each value percent-decoded (the specification's
// form, so that a value may hold a comma), kept as written where it does
// not decode; a pair without '=' or with an empty key is skipped.
type envDetector struct{ getenv func(string) string }

// Detect implements resource.Detector.
func (d envDetector) Detect(context.Context) (*resource.Resource, error) {
	var kv []attribute.KeyValue
	for _, pair := range strings.Split(strings.TrimSpace(d.getenv("OTEL_RESOURCE_ATTRIBUTES")), ",") {
		k, v, ok := strings.Cut(pair, "=")
		if k = strings.TrimSpace(k); !ok || k == "" {
			continue
		}
		if dec, err := url.PathUnescape(strings.TrimSpace(v)); err == nil {
			v = dec
		}
		kv = append(kv, attribute.String(k, v))
	}
	if s := strings.TrimSpace(d.getenv("OTEL_SERVICE_NAME")); s != "" {
		kv = append(kv, attribute.String("service.name", s))
	}
	return resource.NewSchemaless(kv...), nil
}

// PrometheusHandler serves the metrics in the Prometheus text format; nil
// unless Setup was given WithPrometheus.
func (p *Providers) PrometheusHandler() http.Handler { return p.prom }

// InstrumentOptions returns the options that make New use these providers
// and register with the Producer.
func (p *Providers) InstrumentOptions() []Option {
	return []Option{WithMeterProvider(p.MeterProvider), WithTracerProvider(p.TracerProvider), WithProducer(p.Producer)}
}

// Meter returns p's meter provider as the API interface (for libraries such
// as Proto.Actor that take one).
func (p *Providers) Meter() metric.MeterProvider { return p.MeterProvider }

// SetGlobal installs the providers and the W3C trace-context propagator as
// OpenTelemetry's globals.
func (p *Providers) SetGlobal() {
	otel.SetMeterProvider(p.MeterProvider)
	otel.SetTracerProvider(p.TracerProvider)
	otel.SetTextMapPropagator(p.Propagator)
}

// Shutdown flushes what the exporters hold and stops them; ctx bounds it.
// Later calls return nil.
func (p *Providers) Shutdown(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for i := len(p.shutdown) - 1; i >= 0; i-- {
		errs = append(errs, p.shutdown[i](ctx))
	}
	p.shutdown = nil
	return errors.Join(errs...)
}
