package telemetry

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ringactor/ringactor/internal/testutil/otlptest"
)

// clearOTelEnv unsets the OTEL_* variables Setup reads, for the test.
func clearOTelEnv(t *testing.T) {
	for _, k := range []string{"OTEL_METRICS_EXPORTER", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
		"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL",
		"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_SDK_DISABLED"} {
		t.Setenv(k, "")
	}
}

func TestSetupPrometheusServesKernelSeries(t *testing.T) {
	clearOTelEnv(t)
	ctx := context.Background()
	p, err := Setup(ctx, WithPrometheus(), WithServiceName("svc"), WithCluster("c1"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown(ctx)
	lat := NewHistogram()
	for range 7 {
		lat.Observe(2 * time.Microsecond)
	}
	src := func() []KernelStats {
		return []KernelStats{{Kernel: "k1", Processed: 7, Latency: lat.Snapshot()}}
	}
	inst, err := New(src, p.InstrumentOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	rec := httptest.NewRecorder()
	p.PrometheusHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	text := string(body)
	for _, want := range []string{
		`ringactor_messages_processed_total{kernel="k1"`,
		`ringactor_message_latency_seconds_count{kernel="k1"`,
		`go_goroutines`,
		`service_name="svc"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	line := ""
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "ringactor_messages_processed_total{") && strings.Contains(l, `kernel="k1"`) {
			line = l
		}
	}
	if !strings.HasSuffix(line, " 7") {
		t.Errorf("processed series = %q, want 7", line)
	}
}

func TestSetupRejectsUnknownExporter(t *testing.T) {
	clearOTelEnv(t)
	t.Setenv("OTEL_METRICS_EXPORTER", "zipkin")
	if _, err := Setup(context.Background()); !errors.Is(err, ErrBadExporter) {
		t.Fatalf("Setup = %v, want ErrBadExporter", err)
	}
	clearOTelEnv(t)
	t.Setenv("OTEL_METRICS_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "carrier-pigeon")
	if _, err := Setup(context.Background()); !errors.Is(err, ErrBadExporter) {
		t.Fatalf("Setup = %v, want ErrBadExporter", err)
	}
}

func TestSetupWithoutEndpointExportsNothing(t *testing.T) {
	clearOTelEnv(t)
	p, err := Setup(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown(context.Background())
	if p.PrometheusHandler() != nil {
		t.Error("a Prometheus handler without WithPrometheus")
	}
	// No span exporter: spans are not recorded at all.
	_, span := p.TracerProvider.Tracer("t").Start(context.Background(), "s")
	if span.IsRecording() {
		t.Error("spans are recorded with no traces exporter")
	}
	span.End()
}

func TestSetupExportsOTLPFromEnvironment(t *testing.T) {
	clearOTelEnv(t)
	recv := otlptest.New()
	defer recv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.URL())
	t.Setenv("OTEL_SERVICE_NAME", "from-env")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, err := Setup(ctx, WithMemberAddress("127.0.0.1:7000"))
	if err != nil {
		t.Fatal(err)
	}
	lat := NewHistogram()
	lat.Observe(time.Microsecond)
	inst, err := New(func() []KernelStats { return []KernelStats{{Kernel: "k", Processed: 1, Latency: lat.Snapshot()}} }, p.InstrumentOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	_, span := inst.Tracer().Start(ctx, "unit-span")
	span.End()
	// Shutdown flushes both signals to the receiver.
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	_ = inst.Close()
	if err := recv.Wait(ctx, func(r *otlptest.Receiver) bool {
		return r.MetricNames()[MessageLatency] && len(r.SpanNames()["unit-span"]) == 1
	}); err != nil {
		t.Fatalf("receiver got metrics %v spans %v: %v", recv.MetricNames(), recv.SpanNames(), err)
	}
	if !recv.MetricNames()[MessagesProcessed] {
		t.Errorf("no %s in %v", MessagesProcessed, recv.MetricNames())
	}
	for k, want := range map[string]string{"service.name": "from-env", "deployment.environment": "test", ResourceMemberAddress: "127.0.0.1:7000"} {
		if got := recv.ResourceAttr(k); got != want {
			t.Errorf("resource %s = %q, want %q", k, got, want)
		}
	}
}
