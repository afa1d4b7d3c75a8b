//go:build race

package ringrt

const raceEnabled = true
