//go:build !race

package cluster_test

import (
	"testing"
	"time"

	"github.com/ringactor/ringactor/cluster"
)

// TestBusyActivationIsNotIdle sends requests to an identity of a kind with
// a 150 ms idle timeout every 10 ms for 750 ms: they reach its kernel
// through the activation's inbox, not the grain's mailbox, and still keep
// it active (its running count never restarts). The short period leaves
// a loaded machine most of the timeout for each request's own latency.
func TestBusyActivationIsNotIdle(t *testing.T) {
	ctx := testCtx(t)
	id := unique("busy")
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for n := 1; n <= 75; n++ {
		got, err := cluster.Request[total](ctx, memberA, "idle", id, add{N: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got.Calls != n {
			t.Fatalf("request %d: the activation restarted (%+v)", n, got)
		}
		<-tick.C
	}
}
