package telemetry

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/sdk/resource"
)

// FuzzResourceEnv: OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME, read
// through Setup's getenv, give exactly the attributes the OpenTelemetry
// SDK's own reading of them (resource.WithFromEnv) gives: the same keys and
// values, percent-decoding and service.name's precedence included.
func FuzzResourceEnv(f *testing.F) {
	for _, s := range [][2]string{{"", ""}, {"deployment.environment=test", "svc"}, {"a=1,b=2", " svc "},
		{"k=a%2Cb", ""}, {"k=%zz", ""}, {"k= %41 ", ""}, {" k = v ", ""}, {"=v,k", ""}, {"k=v=w", ""}, {"k=1,k=2", ""},
		{"service.name=x", "y"}, {"service.name=x", ""}, {",,,", ""}, {"k=\xff", "\xff"}, {"k=é%C3%A9", ""}, {"a b=c d", "s s"}} {
		f.Add(s[0], s[1])
	}
	// The SDK reports a value that does not percent-decode to OTel's error
	// handler, which logs it: not while fuzzing.
	prev := otel.GetErrorHandler()
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
	f.Cleanup(func() { otel.SetErrorHandler(prev) })
	f.Fuzz(func(t *testing.T, attrs, service string) {
		if strings.ContainsRune(attrs+service, 0) {
			return // not a value an environment variable can hold
		}
		env := map[string]string{"OTEL_RESOURCE_ATTRIBUTES": attrs, "OTEL_SERVICE_NAME": service}
		ours, err := envDetector{func(k string) string { return env[k] }}.Detect(context.Background())
		if err != nil {
			t.Fatalf("Detect: %v", err)
		}
		t.Setenv("OTEL_RESOURCE_ATTRIBUTES", attrs)
		t.Setenv("OTEL_SERVICE_NAME", service)
		sdk, _ := resource.New(context.Background(), resource.WithFromEnv()) // a partial resource on a malformed pair
		if !ours.Set().Equals(sdk.Set()) {
			t.Fatalf("OTEL_RESOURCE_ATTRIBUTES=%q OTEL_SERVICE_NAME=%q: %v, the SDK reads %v", attrs, service, ours.Attributes(), sdk.Attributes())
		}
	})
}

// FuzzMetricsEnv: any OTEL_METRICS_EXPORTER value names each of otlp and
// console at most once, exactly those of its entries (a blank value:
// otlp), or is ErrBadExporter naming an entry that is not otlp, console or
// none; any OTLP protocol values give http/protobuf or grpc, or
// ErrBadExporter.
func FuzzMetricsEnv(f *testing.F) {
	for _, s := range [][3]string{{"", "", ""}, {"otlp", "", "grpc"}, {"console,", "grpc", "http/protobuf"},
		{"otlp,otlp", "", ""}, {" none ", "", ""}, {",", "", ""}, {"zipkin", "", ""}, {"otlp, console ,none", " grpc", ""},
		{"OTLP", "GRPC", ""}, {"prometheus", "http/json", ""}, {"none,otlp", "", "carrier-pigeon"}} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, exporters, metricsProto, proto string) {
		names, err := metricExporters(exporters)
		var entries []string
		for _, n := range strings.Split(exporters, ",") {
			entries = append(entries, strings.TrimSpace(n))
		}
		if strings.TrimSpace(exporters) == "" {
			entries = []string{"otlp"}
		}
		if err != nil {
			bad := slices.ContainsFunc(entries, func(n string) bool { return n != "" && n != "none" && n != "otlp" && n != "console" })
			if !errors.Is(err, ErrBadExporter) || !bad || names != nil {
				t.Fatalf("metricExporters(%q) = %q, %v", exporters, names, err)
			}
		} else {
			for _, want := range []string{"otlp", "console"} {
				if n := strings.Count(strings.Join(names, ","), want); n != min(1, countOf(entries, want)) {
					t.Fatalf("metricExporters(%q) = %q: %s %d times", exporters, names, want, n)
				}
			}
			if len(names) != len(slices.Compact(slices.Clone(names))) || slices.ContainsFunc(names, func(n string) bool { return n != "otlp" && n != "console" }) {
				t.Fatalf("metricExporters(%q) = %q", exporters, names)
			}
		}
		p, err := otlpProtocol(metricsProto, proto)
		named := proto
		if metricsProto != "" {
			named = metricsProto
		}
		switch {
		case err != nil:
			if !errors.Is(err, ErrBadExporter) || named == "" || named == "grpc" || named == "http/protobuf" {
				t.Fatalf("otlpProtocol(%q, %q) = %v", metricsProto, proto, err)
			}
		case named == "grpc" && p != "grpc", named != "grpc" && p != "http/protobuf", named != "" && named != p:
			t.Fatalf("otlpProtocol(%q, %q) = %q", metricsProto, proto, p)
		}
	})
}

// countOf counts the elements of s equal to v.
func countOf(s []string, v string) int {
	n := 0
	for _, e := range s {
		if e == v {
			n++
		}
	}
	return n
}
