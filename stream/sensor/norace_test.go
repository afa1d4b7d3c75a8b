//go:build !race

package sensor

// raceEnabled is false without the race detector.
const raceEnabled = false
