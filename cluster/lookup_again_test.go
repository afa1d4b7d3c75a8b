package cluster

import (
	"context"
	"testing"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/internal/testutil/hangguard"
)

// TestGoneActivationLooksAgainAtOnce: a request whose cached activation
// has passivated (a stale PID, as every client holds for the identities
// of a member whose devices faulted) finds the new activation without
// pausing between its lookups: the dead letter says the PID is stale, and
// the placement, asked at once, activates the identity again. Before, the
// request paused (lookupRetry, 20 ms) first: every moved identity's next
// call paid it.
func TestGoneActivationLooksAgainAtOnce(t *testing.T) {
	verifyNoLeaks(t)
	ctx := hangguard.Context(t)
	k := NewKind("again", func() actors.Handler[gated, gated] {
		return func(_ context.Context, g gated) (gated, error) { return g, nil }
	})
	m, err := Start(ctx, "again", Peers(nil), []*Kind{k}, WithLogger(actors.DiscardLogger()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(hangguard.Context(t)); err != nil {
			t.Error(err)
		}
	})
	if err := m.WaitMembers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		if got, err := Request[gated](ctx, m, "again", "id", gated{N: round}); err != nil || got.N != round {
			t.Fatalf("round %d: %+v, %v", round, got, err)
		}
		// Passivate it; the PID cache still holds its inbox.
		m.sys.Root.Send(m.placement, fenceAllRequest{})
		hangguard.Until(ctx, t, "the activation passivated", func() bool { return m.activations.Load() == 0 })
		if pid, ok := m.cluster.PidCache.Get("id", "again"); !ok || pid == nil {
			t.Fatal("the passivated activation's PID left the cache: the test would not send to a stale PID")
		}
		pauses := m.lookupPauses.Load()
		if got, err := Request[gated](ctx, m, "again", "id", gated{N: 10 + round}); err != nil || got.N != 10+round {
			t.Fatalf("round %d after the passivation: %+v, %v", round, got, err)
		}
		if n := m.lookupPauses.Load() - pauses; n != 0 {
			t.Fatalf("round %d: the request to the passivated activation paused %d times before it looked again", round, n)
		}
	}
}
