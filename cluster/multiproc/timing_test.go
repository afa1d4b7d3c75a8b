package multiproc

import (
	"os"
	"time"
)

// strictTimingEnv set to 1 holds the scenarios to the product's timing
// bounds as they are stated (recovery within 10 s, 3 s in the churn test, a
// killed member dropped within its etcd lease plus 3 s, a reply at most
// 500 ms past its deadline). Without it each bound is widened by
// looseTimingFactor into a guard against hangs: CI runs on a shared machine
// whose load no test may depend on (a killed member was once dropped 9.7 s
// after the kill, against 6 s, at load average 50 on two cores). The
// measured figures are logged either way; docs/cluster.md names the command
// that holds them to the bounds.
const strictTimingEnv = "RINGACTOR_STRICT_TIMING"

// looseTimingFactor widens a timing bound when strictTimingEnv is unset.
const looseTimingFactor = 5

// bound is d under strictTimingEnv, d widened into a hang guard otherwise.
// Child processes inherit the environment, so both sides agree.
func bound(d time.Duration) time.Duration {
	if os.Getenv(strictTimingEnv) == "1" {
		return d
	}
	return d * looseTimingFactor
}
