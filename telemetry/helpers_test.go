package telemetry

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
)

// fakeSource returns two fixed kernels and counts its calls.
type fakeSource struct {
	calls atomic.Int64
}

func (f *fakeSource) stats() []KernelStats {
	f.calls.Add(1)
	return []KernelStats{
		{
			Kernel: "vector_add", Backend: "cuda", State: "active",
			Processed: 1000, Dropped: 3, Errors: 2, Restarts: 1,
			Depth: 17, Capacity: 1024, MemoryBytes: 65536,
			LatencyMin: 2 * time.Microsecond, LatencyAvg: 5 * time.Microsecond, LatencyMax: 40 * time.Microsecond,
			LastActivity: time.Unix(1700000000, 0),
		},
		{
			Kernel: "reduce", Backend: "cpu", State: "deactivated",
			Processed: 42, Dropped: 0, Errors: 0, Restarts: 0,
			Depth: 0, Capacity: 256, MemoryBytes: 4096,
			LatencyMin: time.Millisecond, LatencyAvg: 2 * time.Millisecond, LatencyMax: 3 * time.Millisecond,
		},
	}
}

// newTest returns Instruments on a fresh SDK meter provider with a manual
// reader, closed at the end of the test.
func newTest(t *testing.T, src Source) (*Instruments, *sdkmetric.ManualReader) {
	t.Helper()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	inst, err := New(src, WithMeterProvider(mp))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = inst.Close() })
	return inst, r
}

// collect reads every metric of the ScopeName scope, by name.
func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("Collect: %v", err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != ScopeName {
			t.Fatalf("scope %q, want %q", sm.Scope.Name, ScopeName)
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// assertMetric checks that got holds name with the given unit and data,
// timestamps ignored and data points compared as a set.
func assertMetric(t *testing.T, got map[string]metricdata.Metrics, name, unit string, want metricdata.Aggregation) {
	t.Helper()
	m, ok := got[name]
	if !ok {
		t.Errorf("metric %s missing", name)
		return
	}
	if m.Unit != unit {
		t.Errorf("%s unit = %q, want %q", name, m.Unit, unit)
	}
	if m.Description == "" {
		t.Errorf("%s has no description", name)
	}
	metricdatatest.AssertAggregationsEqual(t, want, m.Data, metricdatatest.IgnoreTimestamp())
}

func kernelSet(k string) attribute.Set {
	return attribute.NewSet(attribute.String(AttrKernel, k))
}

func intGauge(a, b int64) metricdata.Gauge[int64] {
	return metricdata.Gauge[int64]{DataPoints: []metricdata.DataPoint[int64]{
		{Attributes: kernelSet("vector_add"), Value: a},
		{Attributes: kernelSet("reduce"), Value: b},
	}}
}

func intCounter(a, b int64) metricdata.Sum[int64] {
	return metricdata.Sum[int64]{
		Temporality: metricdata.CumulativeTemporality,
		IsMonotonic: true,
		DataPoints: []metricdata.DataPoint[int64]{
			{Attributes: kernelSet("vector_add"), Value: a},
			{Attributes: kernelSet("reduce"), Value: b},
		},
	}
}
