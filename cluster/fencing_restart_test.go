//go:build !race

package cluster

import (
	"testing"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/internal/testutil/hangguard"
)

// TestRestartOnSameAddressKeepsOthersUnfenced: member B stops gracefully
// and starts again on the same address (a rolling restart), as a new
// process with a new member id. Member A, which last had a greeting
// answered by the old B more than two failure timeouts before it hears the
// new one, does not fence itself for it: the new B, which has not heard of
// A, cannot have dropped it. A's greetings to the new B are cut (lost)
// here, so that nothing but that rule keeps A serving: A is not fenced,
// does not presume itself dropped, and keeps its activations, which answer
// again and again from the same activation. (Before, A dated its fence
// from the old B's last answer, already past: it fenced itself at once,
// presumed itself dropped and passivated everything at every restart of a
// member on its address; TestChurn showed every member doing so at each
// step of its roll.) Once the cut heals, both converge, and no identity
// ever had two live activations.
func TestRestartOnSameAddressKeepsOthersUnfenced(t *testing.T) {
	ctx := hangguard.Context(t)
	live := newLiveCount(t)
	const failure = time.Second
	popts := []PeersOption{WithHeartbeat(50 * time.Millisecond), WithFailureTimeout(failure)}
	pa := Peers(nil, popts...)
	a := live.startMember(ctx, t, "restart", pa)
	b, err := Start(ctx, "restart", Peers([]string{a.Address()}, popts...), []*Kind{live.kind()}, WithLogger(actors.DiscardLogger()))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*Member{a, b} {
		if err := m.WaitMembers(ctx, 2); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, ctx, "readiness", m.isReady)
	}
	ids := activateOwned(ctx, t, a, a, "r", 8)
	first := map[string]int64{}
	for _, id := range ids {
		r, err := Request[fenceReply](ctx, a, "fenced", id, fenceBump{})
		if err != nil {
			t.Fatal(err)
		}
		first[id] = r.Activation
	}

	bAddr := b.Address()
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, ctx, "A dropping the old B", func() bool { return a.Members() == 1 })
	// From now on A's greetings to B's address are lost, and A does not
	// answer B's: only B's greetings reach A.
	toB := func(addr string) bool { return addr == bAddr }
	pa.cut.Store(&toB)
	// The old B's last answer to A is older than two failure timeouts
	// (the fence's limit plus the failure timeout after which a fenced
	// member presumes itself dropped).
	waitUntil(t, ctx, "the old B's last answer getting old", func() bool {
		pa.mu.Lock()
		defer pa.mu.Unlock()
		pr := pa.peers[bAddr]
		return pr != nil && time.Since(pr.acked) > 2*failure
	})

	// B again, on its address: a new process (member id), seeded with A.
	b2, err := Start(ctx, "restart", Peers([]string{a.Address()}, popts...), []*Kind{live.kind()},
		WithLogger(actors.DiscardLogger()), WithAddress(bAddr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b2.Close(hangguard.Context(t)) })
	// A hears the new B's greetings: its topology holds B again. The
	// publish that put B there dated A's fence (and would have presumed A
	// dropped) before it updated the topology.
	waitUntil(t, ctx, "A seeing the new B", func() bool { return a.Members() == 2 })
	pa.mu.Lock()
	presumed := pa.presumed
	pa.mu.Unlock()
	if presumed || a.isFenced() {
		t.Fatalf("A fenced itself (presumed dropped: %v) for the new B, which has not heard of it", presumed)
	}
	for _, id := range ids {
		r, err := Request[fenceReply](ctx, a, "fenced", id, fenceBump{})
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if r.Activation != first[id] {
			t.Errorf("%s answered from activation %d, want %d (A passivated it)", id, r.Activation, first[id])
		}
	}
	if n := a.Activations(); n != len(ids) {
		t.Errorf("A holds %d activations, want %d", n, len(ids))
	}

	// The cut heals: both converge and every identity answers from both.
	pa.cut.Store(nil)
	for _, m := range []*Member{a, b2} {
		waitUntil(t, ctx, m.Address()+" seeing both", func() bool { return m.Members() == 2 && m.isReady() && !m.isFenced() })
		bumpUntilOK(ctx, t, m, ids, "after the cut healed")
	}
}
