//go:build !race

package wire

// raceEnabled is true under the race detector, which makes sync.Pool drop
// items at random and so breaks allocation counts of pooled paths.
const raceEnabled = false
