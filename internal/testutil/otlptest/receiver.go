// Package otlptest is an in-process OTLP/HTTP receiver for tests: it
// decodes the OTLP protobuf requests that OpenTelemetry exporters post to
// /v1/metrics and /v1/traces and keeps what they carry.
package otlptest

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"

	colmetric "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Receiver is a running OTLP/HTTP receiver on a loopback port.
type Receiver struct {
	srv *httptest.Server

	mu      sync.Mutex
	metrics []*metricpb.ResourceMetrics
	spans   []*tracepb.ResourceSpans
	changed chan struct{} // closed and replaced at each request
}

// New starts a receiver; Close stops it.
func New() *Receiver {
	r := &Receiver{changed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/metrics", func(w http.ResponseWriter, req *http.Request) {
		var m colmetric.ExportMetricsServiceRequest
		if !decode(w, req, &m) {
			return
		}
		r.mu.Lock()
		r.metrics = append(r.metrics, m.ResourceMetrics...)
		r.notifyLocked()
		r.mu.Unlock()
		reply(w, &colmetric.ExportMetricsServiceResponse{})
	})
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		var t coltrace.ExportTraceServiceRequest
		if !decode(w, req, &t) {
			return
		}
		r.mu.Lock()
		r.spans = append(r.spans, t.ResourceSpans...)
		r.notifyLocked()
		r.mu.Unlock()
		reply(w, &coltrace.ExportTraceServiceResponse{})
	})
	r.srv = httptest.NewServer(mux)
	return r
}

// decode reads an OTLP protobuf body (gzip or not) into m; on failure it
// answers 400 and returns false.
func decode(w http.ResponseWriter, req *http.Request, m proto.Message) bool {
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return false
		}
		defer gz.Close()
		body = gz
	}
	b, err := io.ReadAll(body)
	if err == nil {
		err = proto.Unmarshal(b, m)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

// reply answers an export with its (empty) protobuf response.
func reply(w http.ResponseWriter, m proto.Message) {
	b, _ := proto.Marshal(m)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

func (r *Receiver) notifyLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// URL is the receiver's base URL (http://127.0.0.1:PORT), the value of
// OTEL_EXPORTER_OTLP_ENDPOINT.
func (r *Receiver) URL() string { return r.srv.URL }

// Close stops the receiver.
func (r *Receiver) Close() { r.srv.Close() }

// Metrics returns every resource-metrics batch received so far.
func (r *Receiver) Metrics() []*metricpb.ResourceMetrics {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*metricpb.ResourceMetrics(nil), r.metrics...)
}

// Spans returns every resource-spans batch received so far.
func (r *Receiver) Spans() []*tracepb.ResourceSpans {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.ResourceSpans(nil), r.spans...)
}

// Wait waits until cond, evaluated after each request, is true or ctx ends;
// it returns ctx's error then.
func (r *Receiver) Wait(ctx context.Context, cond func(*Receiver) bool) error {
	for {
		r.mu.Lock()
		ch := r.changed
		r.mu.Unlock()
		if cond(r) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// SpanNames returns the names of the spans received, and their trace ids
// (hex) by name.
func (r *Receiver) SpanNames() map[string][]string {
	out := map[string][]string{}
	for _, rs := range r.Spans() {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				out[s.Name] = append(out[s.Name], hexID(s.TraceId))
			}
		}
	}
	return out
}

// MetricNames returns the set of metric names received.
func (r *Receiver) MetricNames() map[string]bool {
	out := map[string]bool{}
	for _, rm := range r.Metrics() {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				out[m.Name] = true
			}
		}
	}
	return out
}

// ResourceAttr returns the string value of a resource attribute of the
// first metrics batch that has it.
func (r *Receiver) ResourceAttr(key string) string {
	for _, rm := range r.Metrics() {
		for _, kv := range rm.GetResource().GetAttributes() {
			if kv.Key == key {
				return kv.GetValue().GetStringValue()
			}
		}
	}
	return ""
}

func hexID(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 2*len(b))
	for i, c := range b {
		out[2*i], out[2*i+1] = digits[c>>4], digits[c&15]
	}
	return string(out)
}
