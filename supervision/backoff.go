package supervision

import (
	"math"
	"math/rand/v2"
	"time"
)

// Backoff computes exponentially growing delays: Initial, Initial×Multiplier,
// … capped at Max, each with up to Jitter (a fraction) of random noise added
// so that restarts of many kernels do not line up.
type Backoff struct {
	Initial    time.Duration
	Max        time.Duration
	Multiplier float64
	Jitter     float64
}

// DefaultBackoff starts at 1 ms and doubles up to 500 ms, with 10 % jitter.
var DefaultBackoff = Backoff{Initial: time.Millisecond, Max: 500 * time.Millisecond, Multiplier: 2, Jitter: 0.1}

// Delay returns the delay before attempt n (n ≥ 1; n < 1 counts as 1).
func (b Backoff) Delay(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	mult := b.Multiplier
	if mult < 1 {
		mult = 1
	}
	d := float64(b.Initial)
	for i := 1; i < n && (b.Max <= 0 || d < float64(b.Max)) && d < math.MaxInt64; i++ {
		d *= mult
	}
	if b.Max > 0 && d > float64(b.Max) {
		d = float64(b.Max)
	}
	if b.Jitter > 0 {
		d += d * b.Jitter * rand.Float64()
	}
	if d >= math.MaxInt64 { // uncapped growth: saturate instead of wrapping negative
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(d)
}
