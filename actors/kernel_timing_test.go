package actors

import (
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
