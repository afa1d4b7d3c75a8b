package actors

import (
	"time"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/telemetry"
)

// Timing: which messages a kernel times, and its latency histograms.
//
// A clock read costs some 25–50 ns here, about a tenth of a whole round
// trip, and timing a message takes three (its admission, its handler's
// start, its end). So a kernel that is busy times a sample of its messages:
// while admissions arrive less than timeAllGap apart on average, one in
// timedEvery is timed; slower than that (a kernel with slow handlers, or
// one that is seldom called) every message is. A timed message stands in
// the histograms for itself and the untimed messages handled since the
// previous timed one (its weight), so their counts and sums still count
// messages; the control block's latency words (min, average, max) are
// those of the timed messages.
const (
	// timedEvery is the sampling period of a busy kernel's timing.
	timedEvery = 16
	// timeAllGap is the mean admission gap from which every message is timed.
	timeAllGap = 10 * time.Microsecond
)

// stampAtAdmission in a slot's enq asks admission to decide whether the
// message is timed and to stamp it (enqueue does, under the producer lock);
// a message forwarded from an upstream kernel keeps the stamp of its first
// admission instead, or its 0 (untimed).
const stampAtAdmission int64 = -1

// admissionClock stamps admitted messages, or leaves them untimed (0): the
// producer side of the sampling. It is guarded by the kernel's producer
// lock. The zero value times every admission until admissions come fast.
type admissionClock struct {
	sample  bool  // the kernel is busy: time one admission in timedEvery
	skipped int32 // admissions left untimed since the last timed one
	last    int64 // monoNow of the last timed admission (0: none yet)
	// gap overrides timeAllGap (tests); 0 means timeAllGap
	gap time.Duration
}

// stamp returns the admission time of the next message, or 0 when it is not
// timed.
func (c *admissionClock) stamp() int64 {
	if c.skip() {
		return 0
	}
	return c.timed(monoNow())
}

// skip reports whether the next admission goes untimed: while sampling, all
// but one in timedEvery.
func (c *admissionClock) skip() bool {
	if !c.sample || c.skipped >= timedEvery-1 {
		return false
	}
	c.skipped++
	return true
}

// timed stamps an admission at now and decides how the next ones are timed:
// sampled while the admissions since the last timed one came less than
// timeAllGap apart on average, all of them otherwise.
func (c *admissionClock) timed(now int64) int64 {
	gap := c.gap
	if gap == 0 {
		gap = timeAllGap
	}
	c.sample = c.last != 0 && (now-c.last)/int64(c.skipped+1) < int64(gap)
	c.skipped, c.last = 0, now
	return now
}

// kernelHistograms are a kernel's latency histograms. The kernel's one
// consumer at a time (its loop, or the actor draining a kernel without a
// loop) is their only writer: a bucket bump is a plain load and store, and
// the OpenTelemetry Producer reads them at collection time, so nothing is
// recorded through the OpenTelemetry API per message.
type kernelHistograms struct {
	latency *telemetry.Histogram // admission → handler return and reply hand-off
	queue   *telemetry.Histogram // admission → handler start
	handler *telemetry.Histogram // handler start → return and reply hand-off

	// consumer-owned: the handled messages not timed since the last timed
	// one, and the handler start and weight of the timed message in hand
	// (start 0: none)
	skipped uint64
	start   int64
	weight  uint64
}

func newKernelHistograms() *kernelHistograms {
	return &kernelHistograms{latency: telemetry.NewHistogram(), queue: telemetry.NewHistogram(), handler: telemetry.NewHistogram()}
}

// invokeTimed runs the handler as invoke does and, when the runtime's
// telemetry is on and the message is timed, reads the clock at its
// handler's start: its queueing delay is that start minus its admission.
// finish ends its handler duration and latency after its reply's hand-off.
// An untimed message costs no clock read.
func (k *kernel[Req, Resp]) invokeTimed(h Handler[Req, Resp], s *slot[Req, Resp]) (Resp, *gpu.ExecutionError) {
	t := k.hist
	if t == nil {
		return k.invokeSpan(h, s)
	}
	if s.enq <= 0 {
		t.skipped++
		return k.invokeSpan(h, s)
	}
	now := monoNow()
	t.weight, t.skipped = t.skipped+1, 0
	t.queue.ObserveN(time.Duration(now-s.enq), t.weight)
	t.start = now
	return k.invokeSpan(h, s)
}

// end ends the handler duration and latency of the timed message in hand,
// admitted at enq, at now: a CPU handler's (invokeTimed) or a device ring
// kernel's (its pump's done). A message whose handler did not run
// (screened out, or refused by the device) has none.
func (t *kernelHistograms) end(now, enq int64) {
	if t == nil || t.start == 0 {
		return
	}
	t.handler.ObserveN(time.Duration(now-t.start), t.weight)
	t.latency.ObserveN(time.Duration(now-enq), t.weight)
	t.start = 0
}

// snapshot fills the histogram fields of st.
func (t *kernelHistograms) snapshot(st *telemetry.KernelStats) {
	if t == nil {
		return
	}
	st.Latency, st.QueueDelay, st.HandlerTime = t.latency.Snapshot(), t.queue.Snapshot(), t.handler.Snapshot()
}
