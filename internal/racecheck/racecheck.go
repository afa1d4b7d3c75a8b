// Package racecheck reads the race detector's reports in the stderr of a
// process a test started (a cluster member run with GORACE=exitcode=0) and
// tells the races of Proto.Actor's own code, which a test tolerates, from
// races in ringactor's code, which fail it.
package racecheck

import (
	"fmt"
	"strings"
)

// DependencyOnly returns an error for each data race report in a
// child's stderr whose two racing accesses are not both inside
// Proto.Actor (or its gofun library). Proto.Actor has races of its own:
// its endpoint reader's suspended flag is written by Shutdown while a
// stream reads it, and its remote block list (a gofun set) is written by
// the gossip actor while the member list reads it. A process may report
// those; they are tolerated, any race whose accesses are in ringactor's
// code fails the test.
func DependencyOnly(stderr string) error {
	const dep = "github.com/asynkron/" // protoactor-go and its gofun
	reports := strings.Split(stderr, "WARNING: DATA RACE")
	var bad []string
	for _, r := range reports[1:] {
		lines := strings.Split(r, "\n")
		tops := 0
		inside := 0
		for i, l := range lines {
			l = strings.TrimSpace(l)
			if (strings.HasPrefix(l, "Read at") || strings.HasPrefix(l, "Write at") ||
				strings.HasPrefix(l, "Previous read at") || strings.HasPrefix(l, "Previous write at")) && i+1 < len(lines) {
				tops++
				// The first frame outside the Go runtime (a map access
				// shows as runtime.mapaccess… first) says whose access it is.
				for _, f := range lines[i+1:] {
					f = strings.TrimSpace(f)
					if strings.HasPrefix(f, "runtime.") || strings.HasPrefix(f, "/") {
						continue
					}
					if strings.HasPrefix(f, dep) {
						inside++
					}
					break
				}
			}
		}
		if tops != 2 || inside != 2 {
			bad = append(bad, r)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%d data race(s) outside Proto.Actor:\n%s", len(bad), strings.Join(bad, "\n---\n"))
	}
	return nil
}
