package actors

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ringactor/ringactor/telemetry"
)

// TestTelemetryInstruments reads the runtime's OpenTelemetry instruments
// with the SDK's manual reader.
func TestTelemetryInstruments(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	rt := newTestRuntime(t, WithTelemetry(true), WithMeterProvider(mp))
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewStatelessKernel("echo", echoNum, WithCapacity(16), WithBackpressure(Reject), WithOverflow(0)), true)
	for i := 0; i < 25; i++ {
		if _, err := k.Request(ctx, num{V: i}); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.Deactivate(ctx); err != nil {
		t.Fatal(err)
	}
	fill(t, k, 0, 16)
	if _, err := k.Send(ctx, num{V: 99}); err == nil {
		t.Fatal("expected a rejection")
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != telemetry.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					if v, _ := p.Attributes.Value(telemetry.AttrKernel); v.AsString() == "echo" {
						got[m.Name] = p.Value
					}
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					if v, _ := p.Attributes.Value(telemetry.AttrKernel); v.AsString() == "echo" {
						got[m.Name] = p.Value
					}
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					if v, _ := p.Attributes.Value(telemetry.AttrStat); v.AsString() == telemetry.StatMax && p.Value > 0 {
						got[m.Name+".max>0"] = 1
					}
				}
			}
		}
	}
	want := map[string]int64{
		telemetry.MessagesProcessed:        25,
		telemetry.MessagesDropped:          1,
		telemetry.RingDepth:                16,
		telemetry.KernelRestarts:           0,
		telemetry.KernelErrors:             0,
		telemetry.KernelLatency + ".max>0": 1,
	}
	for name, v := range want {
		if g, ok := got[name]; !ok || g != v {
			t.Errorf("%s = %d (present %v), want %d", name, g, ok, v)
		}
	}
	if got[telemetry.MemoryAllocated] <= 0 {
		t.Errorf("%s = %d, want > 0", telemetry.MemoryAllocated, got[telemetry.MemoryAllocated])
	}
}
