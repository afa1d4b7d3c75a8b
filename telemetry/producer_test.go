package telemetry

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// histSource is a Source of one kernel whose histograms hold what the test
// observed.
func histSource(kernel string, lat, queue, handler *Histogram) Source {
	return func() []KernelStats {
		return []KernelStats{{Kernel: kernel, Latency: lat.Snapshot(), QueueDelay: queue.Snapshot(), HandlerTime: handler.Snapshot()}}
	}
}

func TestProducerExportsKernelHistograms(t *testing.T) {
	prod := NewProducer()
	r := sdkmetric.NewManualReader(sdkmetric.WithProducer(prod))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })

	lat, queue, handler := NewHistogram(), NewHistogram(), NewHistogram()
	for range 100 {
		lat.Observe(3 * time.Microsecond)
		queue.Observe(500 * time.Nanosecond)
		handler.Observe(2 * time.Microsecond)
	}
	lat.Observe(2 * time.Second)
	inst, err := New(histSource("k1", lat, queue, handler), WithMeterProvider(mp), WithProducer(prod))
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, r)
	h, ok := got[MessageLatency].Data.(metricdata.Histogram[float64])
	if !ok || len(h.DataPoints) != 1 {
		t.Fatalf("%s: %#v", MessageLatency, got[MessageLatency].Data)
	}
	dp := h.DataPoints[0]
	if v, _ := dp.Attributes.Value(AttrKernel); v != attribute.StringValue("k1") {
		t.Errorf("kernel attribute = %v", v)
	}
	if dp.Count != 101 || h.Temporality != metricdata.CumulativeTemporality {
		t.Errorf("count %d temporality %v", dp.Count, h.Temporality)
	}
	if want := 300e-6 + 2; dp.Sum < want-1e-9 || dp.Sum > want+1e-9 {
		t.Errorf("sum = %v, want %v", dp.Sum, want)
	}
	if len(dp.BucketCounts) != len(dp.Bounds)+1 {
		t.Fatalf("%d counts for %d bounds", len(dp.BucketCounts), len(dp.Bounds))
	}
	// The 100 values of 3µs sit in the bucket whose bounds hold 3µs, the
	// 2s one in the bucket holding 2s.
	find := func(v float64) int {
		for i, b := range dp.Bounds {
			if v < b {
				return i
			}
		}
		return len(dp.Bounds)
	}
	if c := dp.BucketCounts[find(3e-6)]; c != 100 {
		t.Errorf("bucket of 3µs counts %d, want 100 (bounds %v)", c, dp.Bounds)
	}
	if c := dp.BucketCounts[find(2)]; c != 1 {
		t.Errorf("bucket of 2s counts %d, want 1", c)
	}
	if dp.Bounds[0] > 100e-9 || dp.Bounds[len(dp.Bounds)-1] < 10 {
		t.Errorf("bounds %v..%v do not span sub-µs to seconds", dp.Bounds[0], dp.Bounds[len(dp.Bounds)-1])
	}
	for _, name := range []string{QueueDelay, HandlerDuration} {
		h := got[name].Data.(metricdata.Histogram[float64])
		if len(h.DataPoints) != 1 || h.DataPoints[0].Count != 100 {
			t.Errorf("%s: %+v", name, h.DataPoints)
		}
	}

	// Closed instruments no longer report through the producer.
	if err := inst.Close(); err != nil {
		t.Fatal(err)
	}
	if got := collect(t, r); len(got[MessageLatency].Name) != 0 {
		t.Errorf("a closed Instruments still exports %s", MessageLatency)
	}
}

func TestProducerLeavesOutEmptyKernels(t *testing.T) {
	prod := NewProducer()
	empty := func() []KernelStats { return []KernelStats{{Kernel: "idle"}} }
	inst, err := New(empty, WithProducer(prod))
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	sm, err := prod.Produce(context.Background())
	if err != nil || len(sm) != 0 {
		t.Fatalf("Produce = %v, %v; want nothing", sm, err)
	}
}

func TestDurationHistogramBounds(t *testing.T) {
	// RecordExecution's histogram resolves sub-microsecond durations: a
	// 200ns execution and a 3s one land in different buckets.
	inst, r := newTest(t, nil)
	inst.RecordExecution(context.Background(), "add", "cpu", 200*time.Nanosecond, 0, 0)
	inst.RecordExecution(context.Background(), "add", "cpu", 3*time.Second, 0, 0)
	h := collect(t, r)[KernelDuration].Data.(metricdata.Histogram[float64])
	dp := h.DataPoints[0]
	nonEmpty := 0
	for _, c := range dp.BucketCounts {
		if c > 0 {
			nonEmpty++
		}
	}
	if nonEmpty != 2 || dp.Bounds[0] > 1e-7 {
		t.Errorf("200ns and 3s share a bucket or bounds start too high: %v / %v", dp.BucketCounts, dp.Bounds[:3])
	}
}
