package telemetry

import (
	"math"
	"testing"
	"time"
)

func TestHistogramBucketBounds(t *testing.T) {
	// Every bucket's bounds contain the values bucketOf puts in it, the
	// bounds increase, and a bucket is at most 25% wide relative to its
	// lower bound.
	for i := 1; i < HistogramBuckets-1; i++ {
		lo, hi := bucketLower(i), bucketUpper(i)
		if !(lo < hi) {
			t.Fatalf("bucket %d: [%v, %v)", i, lo, hi)
		}
		if (hi-lo)/lo > 0.25+1e-9 {
			t.Fatalf("bucket %d: [%v, %v) wider than 25%%", i, lo, hi)
		}
		for _, v := range []uint64{uint64(lo), uint64(hi) - 1, uint64((lo + hi) / 2)} {
			if got := bucketOf(v); got != i {
				t.Fatalf("bucketOf(%d) = %d, want %d ([%v, %v))", v, got, i, lo, hi)
			}
		}
	}
	for _, tc := range []struct {
		ns   uint64
		want int
	}{{0, 0}, {63, 0}, {64, 1}, {80, 2}, {1 << 36, HistogramBuckets - 1}, {math.MaxUint64, HistogramBuckets - 1}} {
		if got := bucketOf(tc.ns); got != tc.want {
			t.Errorf("bucketOf(%d) = %d, want %d", tc.ns, got, tc.want)
		}
	}
	if !math.IsInf(BucketUpper(HistogramBuckets-1), 1) {
		t.Error("the last bucket is not open-ended")
	}
	if lo := BucketLower(HistogramBuckets - 1); math.Abs(lo-68.719476736) > 1e-6 {
		t.Errorf("the overflow bucket starts at %vs, want 2^36 ns", lo)
	}
}

func TestHistogramQuantiles(t *testing.T) {
	h := NewHistogram()
	// 990 messages at 1µs, 10 at 5ms: p50 near 1µs, p99 ≤ 1.25µs, p999
	// near 5ms.
	for range 990 {
		h.Observe(time.Microsecond)
	}
	for range 10 {
		h.Observe(5 * time.Millisecond)
	}
	h.Observe(-time.Second) // counts as zero
	s := h.Snapshot()
	if s.Count != 1001 {
		t.Fatalf("Count = %d, want 1001", s.Count)
	}
	if want := 990*time.Microsecond + 50*time.Millisecond; s.Sum != want {
		t.Errorf("Sum = %v, want %v", s.Sum, want)
	}
	within := func(name string, got, want time.Duration) {
		t.Helper()
		if r := float64(got) / float64(want); r < 0.75 || r > 1.25 {
			t.Errorf("%s = %v, want within 25%% of %v", name, got, want)
		}
	}
	within("p50", s.Quantile(0.5), time.Microsecond)
	within("p99", s.Quantile(0.98), time.Microsecond)
	within("p999", s.Quantile(0.999), 5*time.Millisecond)
	within("max", s.Quantile(1), 5*time.Millisecond)
	if got := s.Quantile(0); got != 0 {
		t.Errorf("p0 = %v, want 0 (the negative observation)", got)
	}
	if got := s.Quantile(7); got != s.Quantile(1) {
		t.Errorf("q > 1 is not clamped: %v vs %v", got, s.Quantile(1))
	}
	within("mean", s.Mean(), (990*time.Microsecond+50*time.Millisecond)/1001)
	if (HistogramSnapshot{}).Quantile(0.5) != 0 || (HistogramSnapshot{}).Mean() != 0 {
		t.Error("an empty snapshot has a non-zero quantile or mean")
	}
	var nilH *Histogram
	if nilH.Snapshot().Count != 0 {
		t.Error("a nil histogram's snapshot is not empty")
	}
}

// TestHistogramObserveNWeighs: a duration observed with weight n counts as
// n observations of it, in the count, the sum and the quantiles, exactly as
// n calls of Observe would; weight 0 records nothing.
func TestHistogramObserveNWeighs(t *testing.T) {
	weighted, plain := NewHistogram(), NewHistogram()
	weighted.ObserveN(time.Microsecond, 99)
	weighted.ObserveN(3*time.Millisecond, 1)
	weighted.ObserveN(time.Hour, 0)
	weighted.ObserveN(-time.Second, 2) // counts as zero, twice
	for range 99 {
		plain.Observe(time.Microsecond)
	}
	plain.Observe(3 * time.Millisecond)
	plain.Observe(0)
	plain.Observe(0)
	w, p := weighted.Snapshot(), plain.Snapshot()
	if w.Count != 102 || w.Count != p.Count || w.Sum != p.Sum {
		t.Fatalf("weighted count %d sum %v, want %d and %v", w.Count, w.Sum, p.Count, p.Sum)
	}
	for i := range w.Counts {
		if w.Counts[i] != p.Counts[i] {
			t.Fatalf("bucket %d: weighted %d, plain %d", i, w.Counts[i], p.Counts[i])
		}
	}
	if w.Quantile(0.5) != p.Quantile(0.5) || w.Quantile(1) != p.Quantile(1) {
		t.Errorf("quantiles differ: %v/%v vs %v/%v", w.Quantile(0.5), w.Quantile(1), p.Quantile(0.5), p.Quantile(1))
	}
}

func TestHistogramOverflowAndHuge(t *testing.T) {
	h := NewHistogram()
	h.Observe(time.Duration(math.MaxInt64))
	h.Observe(2 * time.Minute)
	s := h.Snapshot()
	if s.Counts[HistogramBuckets-1] != 2 {
		t.Fatalf("overflow bucket = %d, want 2", s.Counts[HistogramBuckets-1])
	}
	if got, want := s.Quantile(0.5), time.Duration(1<<36); got != want {
		t.Errorf("p50 of overflowing values = %v, want the overflow bucket's lower bound %v", got, want)
	}
}

func TestHistogramObserveAllocatesNothing(t *testing.T) {
	h := NewHistogram()
	if n := testing.AllocsPerRun(1000, func() { h.Observe(1500 * time.Nanosecond) }); n != 0 {
		t.Fatalf("Observe allocates %v times", n)
	}
}

// BenchmarkHistogramObserve measures one bucket bump, the loop's cost per
// message and histogram.
func BenchmarkHistogramObserve(b *testing.B) {
	h := NewHistogram()
	for i := range b.N {
		h.Observe(time.Duration(i & 0xffff))
	}
}
