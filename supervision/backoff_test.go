package supervision_test

import (
	"testing"
	"time"

	"github.com/ringactor/ringactor/supervision"
)

func TestBackoffDelayGrowsExponentiallyAndCaps(t *testing.T) {
	b := supervision.Backoff{Initial: time.Millisecond, Max: 20 * time.Millisecond, Multiplier: 2}
	want := []time.Duration{1, 2, 4, 8, 16, 20, 20, 20}
	for i, w := range want {
		n := i + 1
		if got := b.Delay(n); got != w*time.Millisecond {
			t.Errorf("Delay(%d) = %v, want %v", n, got, w*time.Millisecond)
		}
	}
	if got := b.Delay(1000); got != 20*time.Millisecond {
		t.Errorf("Delay(1000) = %v, want the cap 20ms", got)
	}
}

func TestBackoffDelayFractionalMultiplier(t *testing.T) {
	b := supervision.Backoff{Initial: 100 * time.Millisecond, Max: time.Second, Multiplier: 1.5}
	if got, want := b.Delay(3), 225*time.Millisecond; got != want {
		t.Errorf("Delay(3) = %v, want %v", got, want)
	}
}

func TestBackoffInitialAboveMaxIsCapped(t *testing.T) {
	b := supervision.Backoff{Initial: time.Second, Max: 10 * time.Millisecond, Multiplier: 2}
	if got := b.Delay(1); got != 10*time.Millisecond {
		t.Errorf("Delay(1) = %v, want 10ms", got)
	}
}

func TestBackoffDelayAttemptBelowOneCountsAsOne(t *testing.T) {
	b := supervision.Backoff{Initial: 3 * time.Millisecond, Max: time.Second, Multiplier: 2}
	for _, n := range []int{0, -1, -100} {
		if got := b.Delay(n); got != 3*time.Millisecond {
			t.Errorf("Delay(%d) = %v, want Initial 3ms", n, got)
		}
	}
}

func TestBackoffMultiplierBelowOneCountsAsOne(t *testing.T) {
	for _, m := range []float64{0, 0.5, -2} {
		b := supervision.Backoff{Initial: 5 * time.Millisecond, Max: time.Second, Multiplier: m}
		for n := 1; n <= 5; n++ {
			if got := b.Delay(n); got != 5*time.Millisecond {
				t.Errorf("Multiplier %v: Delay(%d) = %v, want constant 5ms", m, n, got)
			}
		}
	}
}

func TestBackoffJitterWithinBounds(t *testing.T) {
	b := supervision.Backoff{Initial: 10 * time.Millisecond, Max: 80 * time.Millisecond, Multiplier: 2, Jitter: 0.25}
	for n := 1; n <= 6; n++ {
		base := supervision.Backoff{Initial: b.Initial, Max: b.Max, Multiplier: b.Multiplier}.Delay(n)
		hi := time.Duration(float64(base) * 1.25)
		varied := false
		for range 200 {
			d := b.Delay(n)
			if d < base || d > hi {
				t.Fatalf("Delay(%d) = %v, want within [%v, %v]", n, d, base, hi)
			}
			if d != base {
				varied = true
			}
		}
		if !varied {
			t.Errorf("Delay(%d): 200 draws all equal %v; jitter not applied", n, base)
		}
	}
}

func TestDefaultBackoff(t *testing.T) {
	d := supervision.DefaultBackoff
	if d.Initial != time.Millisecond || d.Max != 500*time.Millisecond || d.Multiplier != 2 || d.Jitter != 0.1 {
		t.Fatalf("DefaultBackoff = %+v", d)
	}
	if got := d.Delay(100); got < 500*time.Millisecond || got > 550*time.Millisecond {
		t.Errorf("DefaultBackoff.Delay(100) = %v, want within [500ms, 550ms]", got)
	}
}

// BUG: with no cap (Max <= 0, which Delay treats as "uncapped") the float
// delay overflows int64 nanoseconds and the conversion yields a negative
// duration (on amd64: -2562047h47m16.854775808s), so a "never give up"
// strategy restarts with no delay at all after ~44 failures.
func TestBackoffUncappedDelayNeverNegativeOrDecreasing(t *testing.T) {
	b := supervision.Backoff{Initial: time.Millisecond, Multiplier: 2}
	prev := time.Duration(0)
	for n := 1; n <= 70; n++ {
		d := b.Delay(n)
		if d < prev {
			t.Fatalf("uncapped Backoff: Delay(%d) = %v < Delay(%d) = %v; want non-decreasing, non-negative delays", n, d, n-1, prev)
		}
		prev = d
	}
}
