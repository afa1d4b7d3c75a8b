package bench

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// fakeCall is one call of a fake measure: which, and how many round trips.
type fakeCall struct{ m, n int }

// fakeMeasures returns measures that log their calls and time every round
// trip as base[i], plus slow while a state shared by all of them is on, as
// the Go scheduler's state that interleave.go describes changes with time.
// The state changes at random (seeded) from one round trip of any measure
// (timed or untimed) to the next: it stays off for stay round trips on
// average and on for stay/2, so it is on a third of the time.
func fakeMeasures(base []time.Duration, slow time.Duration, stay int, seed uint64, log *[]fakeCall) []rttMeasure {
	rng := rand.New(rand.NewPCG(seed, 1))
	on := false
	ms := make([]rttMeasure, len(base))
	for i := range base {
		ms[i] = func(out []time.Duration) error {
			*log = append(*log, fakeCall{i, len(out)})
			for j := range out {
				out[j] = base[i]
				if on {
					out[j] += slow
				}
				if on && rng.IntN(stay/2) == 0 || !on && rng.IntN(stay) == 0 {
					on = !on
				}
			}
			return nil
		}
	}
	return ms
}

// TestInterleaveSameStates: two measures whose round trips cost the same
// extra while a shared state lasts get their ratio from round trips in the
// same state: the paired ratio is the ratio of either state (1.111 off,
// 1.087 on), never one measure's on state over the other's off state (1.39,
// or 0.87 the other way round). Timing each measure in chunks of a tenth
// of its samples and comparing pooled p50s, as bench did before, did that
// in 2–7 of these 40 seeds for each stay (as the quick runs on two cores
// read 1.3–1.4); the pooled p50s of the blocks still do in 0 or 1 (where
// the state is on about half the time), the paired ratio in none.
func TestInterleaveSameStates(t *testing.T) {
	const n = 50_000 // the quick configuration's samples
	base := []time.Duration{200, 180, 190}
	const slow = 50
	lo, hi := float64(base[0]+slow)/float64(base[1]+slow), float64(base[0])/float64(base[1])
	for _, stay := range []int{2_000, 5_000, 8_000, 20_000} {
		for seed := range uint64(40) {
			var log []fakeCall
			ms := fakeMeasures(base, slow, stay, seed, &log)
			s, err := interleaveRTT(5_000, n, ms[:2], ms[2])
			if err != nil {
				t.Fatal(err)
			}
			for i := range s {
				if len(s[i]) != n {
					t.Fatalf("measure %d: %d samples, want %d", i, len(s[i]), n)
				}
			}
			if r := pairedP50Ratio(s[0], s[1]); r < lo-1e-9 || r > hi+1e-9 {
				t.Errorf("stay %d, seed %d: paired ratio %.3f, want %.3f–%.3f (pooled p50s %d, %d)",
					stay, seed, r, lo, hi, percentile(s[0], 50), percentile(s[1], 50))
			}
		}
	}
}

// TestPairedP50Ratio: the blocks pair by position, and the median of their
// ratios is returned.
func TestPairedP50Ratio(t *testing.T) {
	const n = 10 * 2 * rttBlock
	if got := rttBlockBounds(n); len(got) != 20 || got[0] != rttBlock || got[19] != n {
		t.Fatalf("bounds %v", got)
	}
	if got := rttBlockBounds(n + 7); got[len(got)-1] != n+7 || got[len(got)-2] != n {
		t.Fatalf("bounds of %d: last %v", n+7, got[len(got)-2:])
	}
	a, b := make([]time.Duration, n), make([]time.Duration, n)
	for i := range a {
		blk := i / rttBlock
		a[i], b[i] = 300, 200 // ratio 1.5 …
		if blk < 9 {
			a[i], b[i] = 100, 200 // … in 11 blocks of 20, 0.5 in 9
		}
	}
	if r := pairedP50Ratio(a, b); r != 1.5 {
		t.Errorf("ratio %v, want 1.5", r)
	}
	if r := pairedP50Ratio(a, make([]time.Duration, n)); r != 0 {
		t.Errorf("ratio over zeros %v, want 0", r)
	}
}

// TestInterleaveRTTSchedule checks the plan interleave.go describes: the
// warm-ups, one chunk a round for the apart measure, the mixed ones in
// blocks of rttBlock after rttBlockWarm untimed round trips each, in an
// order that alternates, and every sample written by its measure.
func TestInterleaveRTTSchedule(t *testing.T) {
	const n, warmup = 10 * 2 * rttBlock, 300 // two blocks a round
	var log []fakeCall
	base := []time.Duration{1, 2, 3}
	ms := fakeMeasures(base, 0, 2, 0, &log)
	s, err := interleaveRTT(warmup, n, ms[:2], ms[2])
	if err != nil {
		t.Fatal(err)
	}
	for i, samples := range s {
		if len(samples) != n || slices.ContainsFunc(samples, func(d time.Duration) bool { return d != base[i] }) {
			t.Fatalf("measure %d: %d samples, not all its own", i, len(samples))
		}
	}
	chunk := n / rttRounds
	want := []fakeCall{{0, warmup}, {1, warmup}, {2, warmup}}
	blocks := func() []fakeCall {
		return []fakeCall{{0, chunk / 10}, {1, chunk / 10},
			{0, rttBlockWarm}, {0, rttBlock}, {1, rttBlockWarm}, {1, rttBlock}, // first block: in order
			{1, rttBlockWarm}, {1, rttBlock}, {0, rttBlockWarm}, {0, rttBlock}} // second: reversed
	}
	apart := []fakeCall{{2, chunk / 10}, {2, chunk}}
	for r := range rttRounds {
		if r%2 == 0 {
			want = append(append(want, apart...), blocks()...)
		} else {
			want = append(append(want, blocks()...), apart...)
		}
	}
	if !slices.Equal(log, want) {
		t.Errorf("calls\n%v\nwant\n%v", log, want)
	}
}
