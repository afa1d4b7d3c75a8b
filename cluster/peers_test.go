//go:build !race

package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
)

// TestPeersJoinLearnLeave: a member that starts with no seeds is found
// through Add; a third that knows only the second learns the first from
// the second's answer; a member that leaves is dropped at once (well
// before the failure timeout) and its identities move to the others.
func TestPeersJoinLearnLeave(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	quiet := cluster.WithLogger(actors.DiscardLogger())
	start := func(p *cluster.PeersProvider) *cluster.Member {
		m, err := cluster.Start(ctx, "peers", p, []*cluster.Kind{cluster.NewKind("add", addHandler)}, quiet)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Close(context.Background()) })
		return m
	}
	a := start(cluster.Peers(nil))
	pb := cluster.Peers(nil, cluster.WithFailureTimeout(20*time.Second))
	b := start(pb)
	if err := pb.Add(a.Address()); err != nil {
		t.Fatal(err)
	}
	if err := pb.Add("no-port"); err == nil {
		t.Error("Add accepted an address without a port")
	}
	c := start(cluster.Peers([]string{b.Address()}, cluster.WithFailureTimeout(20*time.Second)))
	for _, m := range []*cluster.Member{a, b, c} {
		if err := m.WaitMembers(ctx, 3); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 30 {
		if _, err := cluster.Request[sum](ctx, c, "add", "p"+string(rune('a'+i)), pair{A: []float64{1}, B: []float64{2}}); err != nil {
			t.Fatal(err)
		}
	}
	// A leaves: B and C, whose failure timeout is 20s, drop it at once
	// (while A is still closing: Proto.Actor's shutdown takes seconds).
	left := time.Now()
	closed := make(chan error, 1)
	go func() { closed <- a.Close(ctx) }()
	for _, m := range []*cluster.Member{b, c} {
		waitTopology(t, m, 2)
	}
	if d := time.Since(left); d > 5*time.Second {
		t.Errorf("a leaving member was dropped after %v", d)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if _, err := cluster.Request[sum](ctx, c, "add", "p"+string(rune('a'+i)), pair{A: []float64{1}, B: []float64{2}}); err != nil {
			t.Fatalf("after a member left: %v", err)
		}
	}
}

// waitTopology polls until m counts exactly n members.
func waitTopology(t *testing.T, m *cluster.Member, n int) {
	t.Helper()
	end := time.Now().Add(15 * time.Second)
	for m.Members() != n {
		if time.Now().After(end) {
			t.Fatalf("%s sees %d members, want %d", m.Address(), m.Members(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
