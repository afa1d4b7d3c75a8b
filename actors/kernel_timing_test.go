package actors

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"
)

// TestAdmissionClockSamplesBusyKernels drives the admission clock with
// made-up times: a fresh kernel times every admission; admissions less than
// timeAllGap apart make it time one in timedEvery; slower ones make it time
// every admission again, after at most timedEvery−1 untimed ones.
func TestAdmissionClockSamplesBusyKernels(t *testing.T) {
	var c admissionClock
	now := int64(1_000_000)
	admit := func(step time.Duration) bool { // whether the admission is timed
		now += int64(step)
		if c.skip() {
			return false
		}
		if got := c.timed(now); got != now {
			t.Fatalf("timed(%d) = %d", now, got)
		}
		return true
	}
	// A fresh kernel times its first admissions, slow or fast.
	if !admit(time.Second) || !admit(100*time.Nanosecond) {
		t.Fatal("a fresh kernel left one of its first admissions untimed")
	}
	// Busy: exactly one in timedEvery, the last of each period.
	timed := 0
	for i := range 10 * timedEvery {
		if admit(100 * time.Nanosecond) {
			timed++
			if i%timedEvery != timedEvery-1 {
				t.Fatalf("admission %d of the busy phase timed, want every %dth", i, timedEvery)
			}
		}
	}
	if timed != 10 {
		t.Fatalf("busy phase: %d of %d admissions timed, want 10", timed, 10*timedEvery)
	}
	// Slow: once a timed admission sees the slower pace, every one is.
	untimed := 0
	for !admit(2 * timeAllGap) {
		untimed++
	}
	if untimed > timedEvery-1 {
		t.Fatalf("%d slow admissions untimed before the switch, want at most %d", untimed, timedEvery-1)
	}
	for i := range 50 {
		if !admit(2 * timeAllGap) {
			t.Fatalf("slow admission %d untimed", i)
		}
	}
	// The mean gap decides, not the last one: one slow admission among
	// fast ones in a period keeps the sampling.
	admit(time.Nanosecond) // fast again: the next timed one switches back
	for range timedEvery - 1 {
		admit(100 * time.Nanosecond)
	}
	timed = 0
	for i := range 4 * timedEvery {
		step := 100 * time.Nanosecond
		if i == 5 {
			step = 5 * timeAllGap
		}
		if admit(step) {
			timed++
		}
	}
	if timed != 4 {
		t.Fatalf("a burst with one slow gap: %d timed of %d, want 4", timed, 4*timedEvery)
	}
}

// TestSampledHistogramsCountEveryMessage: a kernel made to sample (every
// admission counts as fast) times one message in timedEvery, yet its
// histograms count every handled message, each timed one standing for the
// untimed ones before it; the control block averages the timed ones.
func TestSampledHistogramsCountEveryMessage(t *testing.T) {
	rt := newTestRuntime(t, WithTelemetry(true))
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewStatelessKernel("sampled", echoNum), false)
	k.k.mu.Lock()
	k.k.clock.gap = time.Duration(math.MaxInt64) // every pace is busy
	k.k.mu.Unlock()
	if err := k.Activate(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 50*timedEvery + 3
	for i := range n {
		r, err := k.Request(ctx, num{V: i})
		if err != nil || r.Sum != i {
			t.Fatalf("request %d: %v, %v", i, r, err)
		}
	}
	if err := k.Terminate(ctx); err != nil { // every outcome recorded
		t.Fatal(err)
	}
	st := k.Telemetry()
	if st.Processed != n {
		t.Fatalf("processed %d, want %d", st.Processed, n)
	}
	// The first two admissions are timed (a fresh kernel, then the first
	// gap), then the last of each period of timedEvery: the untimed
	// messages after the last timed one are not counted yet.
	const timed, counted = 2 + (n-2)/timedEvery, 2 + (n-2)/timedEvery*timedEvery
	for name, h := range map[string]uint64{"latency": st.Latency.Count, "queue delay": st.QueueDelay.Count, "handler": st.HandlerTime.Count} {
		if h != counted {
			t.Errorf("%s histogram counts %d messages, want %d (of %d handled)", name, h, counted, n)
		}
	}
	if got := k.k.cb.LatencyCount.Load(); got != timed {
		t.Errorf("%d messages timed, want %d", got, timed)
	}
	if st.LatencyMin <= 0 || st.LatencyAvg < st.LatencyMin || st.LatencyMax < st.LatencyAvg {
		t.Errorf("latency words min %v avg %v max %v", st.LatencyMin, st.LatencyAvg, st.LatencyMax)
	}
	if st.Latency.Sum < time.Duration(counted)*st.LatencyMin {
		t.Errorf("latency sum %v below %d × the least latency %v: the weights are missing", st.Latency.Sum, counted, st.LatencyMin)
	}
}

// forceSampling makes k's admission clock take every pace for busy, so it
// times one admission in timedEvery after its first two.
func forceSampling[Req, Resp any](k *Kernel[Req, Resp]) {
	k.k.mu.Lock()
	k.k.clock.gap = time.Duration(math.MaxInt64)
	k.k.mu.Unlock()
}

// TestSampledTimingUnderConcurrentRequesters: with many requesters at once
// the stamps are still decided one admission at a time under the producer
// lock, so exactly the same admissions are timed as sequentially, and the
// histograms count every handled message up to the last timed one.
func TestSampledTimingUnderConcurrentRequesters(t *testing.T) {
	rt := newTestRuntime(t, WithTelemetry(true))
	ctx := testCtx(t)
	k := mustLaunch(t, rt, NewStatelessKernel("sampled", echoNum), false)
	forceSampling(k)
	if err := k.Activate(ctx); err != nil {
		t.Fatal(err)
	}
	const requesters, each = 8, 300
	const n = requesters * each
	errs := make(chan error, requesters)
	for g := range requesters {
		go func() {
			for i := range each {
				v := g*each + i
				r, err := k.Request(ctx, num{V: v})
				if err == nil && r.Sum != v {
					err = fmt.Errorf("request %d answered %d", v, r.Sum)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range requesters {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if err := k.Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	st := k.Telemetry()
	const timed, counted = 2 + (n-2)/timedEvery, 2 + (n-2)/timedEvery*timedEvery
	if st.Processed != n || k.k.cb.LatencyCount.Load() != timed {
		t.Fatalf("processed %d, timed %d; want %d and %d", st.Processed, k.k.cb.LatencyCount.Load(), n, timed)
	}
	if st.Latency.Count != counted || st.QueueDelay.Count != counted || st.HandlerTime.Count != counted {
		t.Errorf("histogram counts %d/%d/%d, want %d", st.Latency.Count, st.QueueDelay.Count, st.HandlerTime.Count, counted)
	}
}

// TestChainKeepsTheHeadsStamps: a message forwarded down a chain keeps the
// stamp of its admission to the head, or its 0: the tail times exactly the
// messages the head timed (its latency runs from the head's admission),
// whatever its own pace.
func TestChainKeepsTheHeadsStamps(t *testing.T) {
	rt := newTestRuntime(t, WithTelemetry(true))
	ctx := testCtx(t)
	tail := mustLaunch(t, rt, NewKernel("sum", runningSum), true)
	head := mustLaunch(t, rt, NewStatelessKernel("double", func(_ context.Context, n num) (num, error) { return num{V: 2 * n.V}, nil },
		WithDownstream("sum")), false)
	forceSampling(head)
	if err := head.Activate(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 20*timedEvery + 7
	for i := range n {
		if _, err := Request[total](ctx, rt, "double", num{V: i}); err != nil {
			t.Fatal(err)
		}
	}
	if err := head.Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tail.Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	const timed, counted = 2 + (n-2)/timedEvery, 2 + (n-2)/timedEvery*timedEvery
	if h, tl := head.k.cb.LatencyCount.Load(), tail.k.cb.LatencyCount.Load(); h != timed || tl != timed {
		t.Errorf("head timed %d, tail %d; want %d both", h, tl, timed)
	}
	hs, ts := head.Telemetry(), tail.Telemetry()
	if hs.Latency.Count != counted || ts.Latency.Count != counted {
		t.Errorf("latency counts head %d tail %d, want %d", hs.Latency.Count, ts.Latency.Count, counted)
	}
	if ts.Processed != n || ts.LatencyMin < hs.LatencyMin {
		t.Errorf("tail processed %d, least latency %v below the head's %v", ts.Processed, ts.LatencyMin, hs.LatencyMin)
	}
}
