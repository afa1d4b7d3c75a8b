// Package racecheck reads the race detector's reports in the stderr of a
// process a test started (a cluster member run with GORACE=exitcode=0) and
// tells the races of Proto.Actor's own code, which a test tolerates, from
// races in ringactor's code, which fail it.
package racecheck

import (
	"fmt"
	"strings"
)

// DependencyOnly returns an error for each data race report in a process's
// stderr in which ringactor's code makes one of the two racing accesses
// (the first frame of either stack outside the Go runtime is in module
// github.com/ringactor/ringactor), and for any report it cannot read.
// Races between the dependencies' own goroutines are tolerated: Proto.Actor
// has several — its endpoint reader's suspended flag written by Shutdown
// while a stream reads it, its block list (a gofun set) written by the
// gossip actor while the member list reads it, gossip state mutated while
// protobuf marshals it for the wire.
func DependencyOnly(stderr string) error {
	const ours = "github.com/ringactor/ringactor/"
	reports := strings.Split(stderr, "WARNING: DATA RACE")
	var bad []string
	for _, r := range reports[1:] {
		lines := strings.Split(r, "\n")
		tops, mine := 0, 0
		for i, l := range lines {
			l = strings.TrimSpace(l)
			if !(strings.HasPrefix(l, "Read at") || strings.HasPrefix(l, "Write at") ||
				strings.HasPrefix(l, "Previous read at") || strings.HasPrefix(l, "Previous write at")) {
				continue
			}
			// The first frame outside the Go runtime (a map access shows as
			// runtime.mapaccess… first) says whose access it is.
			for _, f := range lines[i+1:] {
				f = strings.TrimSpace(f)
				if strings.HasPrefix(f, "runtime.") || strings.HasPrefix(f, "/") || strings.HasPrefix(f, "internal/") {
					continue
				}
				tops++
				if strings.HasPrefix(f, ours) || strings.HasPrefix(f, "main.") {
					mine++
				}
				break
			}
		}
		if tops != 2 || mine > 0 {
			bad = append(bad, r)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%d data race(s) in ringactor's code:\n%s", len(bad), strings.Join(bad, "\n---\n"))
	}
	return nil
}
