//go:build !race

package ringrt

const raceEnabled = false
