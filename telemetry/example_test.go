package telemetry_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ringactor/ringactor/telemetry"
)

func Example() {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(ctx)

	// The source reads each live kernel's control block at collection time.
	src := func() []telemetry.KernelStats {
		return []telemetry.KernelStats{{Kernel: "vector_add", Backend: "cuda", Processed: 128, Depth: 4}}
	}
	inst, err := telemetry.New(src, telemetry.WithMeterProvider(mp))
	if err != nil {
		panic(err)
	}
	defer inst.Close()

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
