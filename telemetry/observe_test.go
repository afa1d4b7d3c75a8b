package telemetry

import (
	"math"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

func TestObservables(t *testing.T) {
	src := &fakeSource{}
	_, r := newTest(t, src.stats)

	got := collect(t, r)
	if n := src.calls.Load(); n != 1 {
		t.Fatalf("source called %d times in one collection, want 1", n)
	}

	assertMetric(t, got, MemoryAllocated, "By", intGauge(65536, 4096))
	assertMetric(t, got, RingDepth, "{message}", intGauge(17, 0))
	assertMetric(t, got, MessagesProcessed, "{message}", intCounter(1000, 42))
	assertMetric(t, got, MessagesDropped, "{message}", intCounter(3, 0))
	assertMetric(t, got, KernelRestarts, "{restart}", intCounter(1, 0))
	assertMetric(t, got, KernelErrors, "{error}", intCounter(2, 0))
	// Kernels per device: vector_add runs on "cuda"; reduce on the CPU is
	// not counted.
	assertMetric(t, got, DeviceKernels, "{kernel}", metricdata.Gauge[int64]{DataPoints: []metricdata.DataPoint[int64]{
		{Attributes: attribute.NewSet(attribute.String(AttrBackend, "cuda")), Value: 1},
	}})

	lat := func(kernel, stat string, v float64) metricdata.DataPoint[float64] {
		return metricdata.DataPoint[float64]{
			Attributes: attribute.NewSet(
				attribute.String(AttrKernel, kernel),
				attribute.String(AttrStat, stat)),
			Value: v,
		}
	}
	assertMetric(t, got, KernelLatency, "s", metricdata.Gauge[float64]{DataPoints: []metricdata.DataPoint[float64]{
		lat("vector_add", StatMin, 2e-6),
		lat("vector_add", StatAvg, 5e-6),
		lat("vector_add", StatMax, 40e-6),
		lat("reduce", StatMin, 1e-3),
		lat("reduce", StatAvg, 2e-3),
		lat("reduce", StatMax, 3e-3),
	}})

	// No execution was recorded, so the synchronous instruments are absent.
	for _, name := range []string{KernelExecutions, KernelDuration, MemoryTransferred} {
		if _, ok := got[name]; ok {
			t.Errorf("%s reported without any execution", name)
		}
	}

	collect(t, r)
	if n := src.calls.Load(); n != 2 {
		t.Fatalf("source called %d times in two collections, want 2", n)
	}
}

func TestNilSource(t *testing.T) {
	_, r := newTest(t, nil)
	if got := collect(t, r); len(got) != 0 {
		t.Fatalf("nil source reported %d metrics, want none", len(got))
	}
}

func TestCloseStopsObservation(t *testing.T) {
	src := &fakeSource{}
	inst, r := newTest(t, src.stats)
	if got := collect(t, r); len(got) == 0 {
		t.Fatal("no metrics before Close")
	}
	if err := inst.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := inst.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	got := collect(t, r)
	if n := src.calls.Load(); n != 1 {
		t.Fatalf("source called %d times, want 1 (none after Close)", n)
	}
	for name, m := range got {
		if n := dataPoints(m.Data); n != 0 {
			t.Errorf("%s has %d data points after Close", name, n)
		}
	}
}

func TestClampInt64(t *testing.T) {
	for in, want := range map[uint64]int64{
		0:                 0,
		math.MaxInt64:     math.MaxInt64,
		math.MaxInt64 + 1: math.MaxInt64,
		math.MaxUint64:    math.MaxInt64,
	} {
		if got := clampInt64(in); got != want {
			t.Errorf("clampInt64(%d) = %d, want %d", in, got, want)
		}
	}
}

// dataPoints counts the data points of an aggregation.
func dataPoints(a metricdata.Aggregation) int {
	switch d := a.(type) {
	case metricdata.Gauge[int64]:
		return len(d.DataPoints)
	case metricdata.Gauge[float64]:
		return len(d.DataPoints)
	case metricdata.Sum[int64]:
		return len(d.DataPoints)
	case metricdata.Sum[float64]:
		return len(d.DataPoints)
	case metricdata.Histogram[float64]:
		return len(d.DataPoints)
	}
	return -1
}
