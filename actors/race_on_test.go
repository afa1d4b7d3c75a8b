//go:build race

package actors

// raceEnabled: the tests run under the race detector (sync.Pool drops a
// quarter of what it is given, on purpose).
const raceEnabled = true
