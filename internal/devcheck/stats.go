package devcheck

import (
	"slices"
	"time"
)

// quantileUS returns the q-quantile (0..1, nearest rank) of samples in
// microseconds; 0 for no samples.
func quantileUS(samples []time.Duration, q float64) float64 {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	i = min(max(i, 0), len(s)-1)
	return float64(s[i]) / 1e3
}
