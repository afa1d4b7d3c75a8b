package telemetry

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

func execSet(kernel, backend string) attribute.Set {
	return attribute.NewSet(
		attribute.String(AttrKernel, kernel),
		attribute.String(AttrBackend, backend))
}

func transferSet(kernel, backend, dir string) attribute.Set {
	return attribute.NewSet(
		attribute.String(AttrKernel, kernel),
		attribute.String(AttrBackend, backend),
		attribute.String(AttrDirection, dir))
}

// countsOf returns the bucket counts of vals over DurationBounds (a value
// equal to a bound belongs to that bound's bucket, as in the SDK).
func countsOf(vals ...float64) []uint64 {
	b := DurationBounds()
	c := make([]uint64, len(b)+1)
	for _, v := range vals {
		i := 0
		for i < len(b) && v > b[i] {
			i++
		}
		c[i]++
	}
	return c
}

func TestRecordExecution(t *testing.T) {
	inst, r := newTest(t, nil)
	ctx := context.Background()

	inst.RecordExecution(ctx, "vector_add", "cuda", 500*time.Millisecond, 1024, 512)
	inst.RecordExecution(ctx, "vector_add", "cuda", 1500*time.Millisecond, 2048, 0)
	inst.RecordExecution(ctx, "vector_add", "cpu", 7*time.Second, 0, 0)
	inst.RecordExecution(ctx, "reduce", "cuda", 250*time.Millisecond, -5, 8)

	got := collect(t, r)

	assertMetric(t, got, KernelExecutions, "{execution}", metricdata.Sum[int64]{
		Temporality: metricdata.CumulativeTemporality,
		IsMonotonic: true,
		DataPoints: []metricdata.DataPoint[int64]{
			{Attributes: execSet("vector_add", "cuda"), Value: 2},
			{Attributes: execSet("vector_add", "cpu"), Value: 1},
			{Attributes: execSet("reduce", "cuda"), Value: 1},
		},
	})

	hist := func(set attribute.Set, counts []uint64, n uint64, sum, lo, hi float64) metricdata.HistogramDataPoint[float64] {
		return metricdata.HistogramDataPoint[float64]{
			Attributes:   set,
			Count:        n,
			Bounds:       DurationBounds(),
			BucketCounts: counts,
			Sum:          sum,
			Min:          metricdata.NewExtrema(lo),
			Max:          metricdata.NewExtrema(hi),
		}
	}
	assertMetric(t, got, KernelDuration, "s", metricdata.Histogram[float64]{
		Temporality: metricdata.CumulativeTemporality,
		DataPoints: []metricdata.HistogramDataPoint[float64]{
			hist(execSet("vector_add", "cuda"), countsOf(0.5, 1.5), 2, 2.0, 0.5, 1.5),
			hist(execSet("vector_add", "cpu"), countsOf(7), 1, 7.0, 7.0, 7.0),
			hist(execSet("reduce", "cuda"), countsOf(0.25), 1, 0.25, 0.25, 0.25),
		},
	})

	assertMetric(t, got, MemoryTransferred, "By", metricdata.Sum[int64]{
		Temporality: metricdata.CumulativeTemporality,
		IsMonotonic: true,
		DataPoints: []metricdata.DataPoint[int64]{
			{Attributes: transferSet("vector_add", "cuda", DirectionHostToDevice), Value: 3072},
			{Attributes: transferSet("vector_add", "cuda", DirectionDeviceToHost), Value: 512},
			{Attributes: transferSet("reduce", "cuda", DirectionDeviceToHost), Value: 8},
		},
	})
}

func TestRecordExecutionConcurrent(t *testing.T) {
	inst, r := newTest(t, nil)
	ctx := context.Background()
	const workers, perWorker = 8, 200
	kernels := []string{"a", "b", "c", "d"}

	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for n := range perWorker {
				inst.RecordExecution(ctx, kernels[(w+n)%len(kernels)], "cuda", time.Millisecond, 10, 1)
			}
		})
	}
	wg.Wait()

	got := collect(t, r)
	const total = workers * perWorker
	perKernel := int64(total / len(kernels))
	execs := got[KernelExecutions].Data.(metricdata.Sum[int64])
	if len(execs.DataPoints) != len(kernels) {
		t.Fatalf("%d execution series, want %d", len(execs.DataPoints), len(kernels))
	}
	for _, dp := range execs.DataPoints {
		if dp.Value != perKernel {
			t.Errorf("executions %v = %d, want %d", dp.Attributes.Encoded(attribute.DefaultEncoder()), dp.Value, perKernel)
		}
	}
	var in, out int64
	for _, dp := range got[MemoryTransferred].Data.(metricdata.Sum[int64]).DataPoints {
		switch dir, _ := dp.Attributes.Value(AttrDirection); dir.AsString() {
		case DirectionHostToDevice:
			in += dp.Value
		case DirectionDeviceToHost:
			out += dp.Value
		}
	}
	if in != 10*total || out != total {
		t.Errorf("transferred in=%d out=%d, want %d and %d", in, out, 10*total, total)
	}
}

func TestRecordExecutionDoesNotAllocate(t *testing.T) {
	inst, err := New(nil, WithMeterProvider(metricnoop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	ctx := context.Background()
	inst.RecordExecution(ctx, "k", "cuda", time.Millisecond, 1, 1)
	allocs := testing.AllocsPerRun(1000, func() {
		inst.RecordExecution(ctx, "k", "cuda", time.Millisecond, 1, 1)
	})
	if allocs != 0 {
		t.Fatalf("RecordExecution allocates %v times per call beyond OpenTelemetry, want 0", allocs)
	}
}

func BenchmarkRecordExecution(b *testing.B) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer mp.Shutdown(context.Background())
	inst, err := New(nil, WithMeterProvider(mp))
	if err != nil {
		b.Fatal(err)
	}
	defer inst.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		inst.RecordExecution(ctx, "k", "cuda", time.Millisecond, 64, 64)
	}
}
