// Package telemetry defines ringactor's OpenTelemetry instruments: a meter
// and a tracer named ScopeName, the counters and histograms recorded when a
// kernel executes, and the observable instruments that read every live ring
// kernel's counters through a Source once per collection.
//
// Nothing here is on a ring kernel's hot path: observable instruments are
// read at collection time, and RecordExecution caches its attribute sets so
// that it allocates nothing beyond what the OpenTelemetry SDK needs.
package telemetry
