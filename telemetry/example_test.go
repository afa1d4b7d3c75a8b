package telemetry_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ringactor/ringactor/telemetry"
)

func Example() {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() {
		if err := mp.Shutdown(ctx); err != nil {
			log.Fatal(err)
		}
	}()

	// The source reads each live kernel's control block at collection time.
	src := func() []telemetry.KernelStats {
		return []telemetry.KernelStats{{Kernel: "vector_add", Backend: "cuda", Processed: 128, Depth: 4}}
	}
	inst, err := telemetry.New(src, telemetry.WithMeterProvider(mp))
	if err != nil {
		panic(err)
	}
	defer func() {
		if err := inst.Close(); err != nil {
			log.Fatal(err)
		}
	}()

	inst.RecordExecution(ctx, "vector_add", "cuda", 3*time.Millisecond, 4096, 1024)

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		panic(err)
	}
	var lines []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					name := m.Name
					if dir, ok := dp.Attributes.Value(telemetry.AttrDirection); ok {
						name += "{" + dir.AsString() + "}"
					}
					lines = append(lines, fmt.Sprintf("%s %d", name, dp.Value))
				}
			case metricdata.Gauge[int64]:
				lines = append(lines, fmt.Sprintf("%s %d", m.Name, d.DataPoints[0].Value))
			}
		}
	}
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// ringactor.device.kernels 1
	// ringactor.kernel.errors 0
	// ringactor.kernel.executions 1
	// ringactor.kernel.restarts 0
	// ringactor.memory.allocated 0
	// ringactor.memory.transferred{device_to_host} 1024
	// ringactor.memory.transferred{host_to_device} 4096
	// ringactor.messages.dropped 0
	// ringactor.messages.processed 128
	// ringactor.ring.depth 4
}

// ExampleSetup builds the SDK providers from the OTEL_* environment with a
// Prometheus reader, and hands them to the code that reports.
func ExampleSetup() {
	ctx := context.Background()
	p, err := telemetry.Setup(ctx, telemetry.WithServiceName("my-service"), telemetry.WithPrometheus())
	if err != nil {
		fmt.Println(err)
		return
	}
	// flushes the exporters
	defer func() {
		if err := p.Shutdown(ctx); err != nil {
			log.Fatal(err)
		}
	}()

	// A runtime takes them with actors.WithProviders(p), a member with
	// cluster.WithTelemetry(p); here, the instruments directly.
	inst, err := telemetry.New(func() []telemetry.KernelStats {
		return []telemetry.KernelStats{{Kernel: "k", Processed: 3}}
	}, p.InstrumentOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		if err := inst.Close(); err != nil {
			log.Fatal(err)
		}
	}()
	rec := httptest.NewRecorder()
	p.PrometheusHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, l := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(l, "ringactor_messages_processed_total{") {
			fmt.Println(l[strings.LastIndex(l, " ")+1:])
		}
	}
	// Output: 3
}
