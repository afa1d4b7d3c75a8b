package telemetry

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// Log-linear bucket layout of a Histogram: every power of two from 2^6 ns
// (64 ns) to 2^36 ns (about 68.7 s) is split into 2^histSubBits equal
// buckets, so a bucket is at most 25% wide relative to its lower bound.
// Bucket 0 holds everything below 64 ns and the last bucket everything from
// 2^36 ns up.
const (
	histSubBits = 2
	histSub     = 1 << histSubBits
	histMinExp  = 6
	histMaxExp  = 36

	// HistogramBuckets is the number of buckets of a Histogram.
	HistogramBuckets = (histMaxExp-histMinExp)*histSub + 2
)

// Histogram is a log-linear histogram of durations in nanoseconds with ONE
// writer (a kernel's consumer) and any number of readers. Observe is a few
// plain loads and stores, no read-modify-write and no allocation, so a ring
// kernel's loop can call it per message; readers take a Snapshot at
// collection time; ObserveN records a sampled duration with its weight. The
// zero value is not ready: use NewHistogram.
type Histogram struct {
	counts [HistogramBuckets]atomic.Uint64
	sum    atomic.Uint64
	start  time.Time
}

// NewHistogram returns an empty histogram whose cumulative counts start now.
func NewHistogram() *Histogram { return &Histogram{start: time.Now()} }

// bucketOf returns the bucket of a duration of ns nanoseconds.
func bucketOf(ns uint64) int {
	if ns < 1<<histMinExp {
		return 0
	}
	e := bits.Len64(ns) - 1
	if e >= histMaxExp {
		return HistogramBuckets - 1
	}
	sub := int(ns>>(e-histSubBits)) & (histSub - 1)
	return 1 + (e-histMinExp)*histSub + sub
}

// bucketUpper returns the exclusive upper bound, in nanoseconds, of bucket
// i; the last bucket's is +Inf.
func bucketUpper(i int) float64 {
	switch {
	case i <= 0:
		return 1 << histMinExp
	case i >= HistogramBuckets-1:
		return math.Inf(1)
	}
	e := histMinExp + (i-1)/histSub
	s := (i-1)%histSub + 1
	return float64(uint64(1)<<e + uint64(s)<<(e-histSubBits))
}

// bucketLower returns the inclusive lower bound, in nanoseconds, of bucket i.
func bucketLower(i int) float64 {
	if i <= 0 {
		return 0
	}
	return bucketUpper(i - 1)
}

// Observe records one duration. Only the histogram's one writer may call it.
// A negative d counts as zero.
func (h *Histogram) Observe(d time.Duration) { h.ObserveN(d, 1) }

// ObserveN records n durations of d at once: a sampled duration that stands
// for n observations (its weight), so the count and sum still count them.
// Only the histogram's one writer may call it. A negative d counts as zero;
// n 0 records nothing.
func (h *Histogram) ObserveN(d time.Duration, n uint64) {
	if n == 0 {
		return
	}
	ns := uint64(max(d, 0))
	c := &h.counts[bucketOf(ns)]
	c.Store(c.Load() + n)
	h.sum.Store(h.sum.Load() + n*ns)
}

// Snapshot copies the histogram for a reader. The copy is consistent enough
// for monitoring: a concurrent Observe may be in it or not, and Count is
// the sum of the copied bucket counts.
func (h *Histogram) Snapshot() HistogramSnapshot {
	if h == nil {
		return HistogramSnapshot{}
	}
	s := HistogramSnapshot{Counts: make([]uint64, HistogramBuckets), Start: h.start}
	for i := range h.counts {
		c := h.counts[i].Load()
		s.Counts[i] = c
		s.Count += c
	}
	s.Sum = time.Duration(h.sum.Load())
	return s
}

// HistogramSnapshot is a copy of a Histogram: cumulative bucket counts since
// Start.
type HistogramSnapshot struct {
	// Counts has HistogramBuckets entries (nil when nothing was recorded by
	// a histogram, e.g. a kernel with telemetry off); Counts[i] counts the
	// durations in [BucketLower(i), BucketUpper(i)).
	Counts []uint64
	// Count is the number of recorded durations.
	Count uint64
	// Sum is the total of the recorded durations.
	Sum time.Duration
	// Start is when the histogram began counting.
	Start time.Time
}

// BucketUpper returns the exclusive upper bound of bucket i in seconds
// (+Inf for the last bucket).
func BucketUpper(i int) float64 { return bucketUpper(i) / 1e9 }

// BucketLower returns the inclusive lower bound of bucket i in seconds.
func BucketLower(i int) float64 { return bucketLower(i) / 1e9 }

// Quantile returns an estimate of the q-quantile (0 ≤ q ≤ 1) of the recorded
// durations: the bucket holding that rank, interpolated linearly within it
// (the overflow bucket answers its lower bound). It returns 0 when nothing
// was recorded; q outside [0, 1] is clamped.
func (s HistogramSnapshot) Quantile(q float64) time.Duration {
	if s.Count == 0 || len(s.Counts) == 0 {
		return 0
	}
	q = min(max(q, 0), 1)
	rank := q * float64(s.Count)
	var seen float64
	for i, c := range s.Counts {
		if c == 0 {
			continue
		}
		if seen+float64(c) >= rank {
			lo, hi := bucketLower(i), bucketUpper(i)
			if math.IsInf(hi, 1) {
				return time.Duration(lo)
			}
			frac := (rank - seen) / float64(c)
			return time.Duration(lo + frac*(hi-lo))
		}
		seen += float64(c)
	}
	return time.Duration(bucketLower(HistogramBuckets - 1))
}

// Mean returns the average recorded duration, 0 when there is none.
func (s HistogramSnapshot) Mean() time.Duration {
	if s.Count == 0 {
		return 0
	}
	return s.Sum / time.Duration(s.Count)
}
