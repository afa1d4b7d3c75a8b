//go:build !race

package cluster_test

import (
	"testing"
	"time"

	"github.com/ringactor/ringactor/cluster"
)

// TestBusyActivationIsNotIdle sends requests to an identity of a kind with
// a 150 ms idle timeout every 10 ms, 75 times: they reach its kernel through
// the activation's inbox, not the grain's mailbox, and still keep it active
// (its running count never restarts).
//
// The idle timer is wall-clock, so a loaded machine may leave the
// activation without a message for longer than the timeout between two
// requests, and then it passivates as it should. A restart fails the test
// only when it is certain the activation was busy: when the time from the
// previous request's send to this request's reply — which bounds the
// activation's quiet spell from above — was under the timeout. A restart
// after a longer spell is logged and the count starts again.
func TestBusyActivationIsNotIdle(t *testing.T) {
	const idle = 150 * time.Millisecond // the "idle" kind's timeout
	ctx := testCtx(t)
	id := unique("busy")
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	want, certain, excused := 1, 0, 0
	prevSend := time.Now()
	for n := 1; n <= 75+excused; n++ {
		send := time.Now()
		got, err := cluster.Request[total](ctx, memberA, "idle", id, add{N: 1})
		if err != nil {
			t.Fatal(err)
		}
		spell := time.Since(prevSend)
		prevSend = send
		if n > 1 && spell < idle {
			certain++
		}
		if got.Calls != want {
			if n == 1 || spell < idle || got.Calls != 1 {
				t.Fatalf("request %d: the activation restarted or lost a call (%+v, want %d calls) within %v of the last request", n, got, want, spell)
			}
			excused++
			t.Logf("request %d: passivated after a quiet spell of up to %v (over the %v timeout on a loaded machine); counting again", n, spell, idle)
			want = 1
		}
		want++
		<-tick.C
	}
	t.Logf("%d of %d gaps provably under the idle timeout; %d restarts after longer spells", certain, 74+excused, excused)
}
