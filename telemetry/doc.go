// Package telemetry defines ringactor's OpenTelemetry instruments: a meter
// and a tracer named ScopeName, the counters and histograms recorded when a
// kernel executes, and the observable instruments that read every live ring
// kernel's counters through a Source once per collection.
//
// Latency: a kernel's loop bumps the buckets of its Histograms (one writer,
// plain stores); the Producer, an sdk/metric Producer, exports them as
// histograms at collection time. Setup builds the SDK providers from the
// standard OTEL_* environment (OTLP over HTTP or gRPC, console, a
// Prometheus reader) with the Producer attached to every reader.
//
// Nothing here is on a ring kernel's hot path: observable instruments are
// read at collection time, and RecordExecution caches its attribute sets so
// that it allocates nothing beyond what the OpenTelemetry SDK needs.
package telemetry
