//go:build !race

// Built without -race like cluster_test.go: several members in one process.

package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ringactor/ringactor/cluster"
)

// TestStatus: a member's Status lists the topology's members with their
// kinds, the identities active on itself by kind and its devices; the
// identities a joining member takes over appear as passivated moves to it;
// a member that left is reported lost.
func TestStatus(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ids := make([]string, 20)
	for i := range ids {
		ids[i] = fmt.Sprintf("s%02d", i)
	}
	a := tallyMember(t, "status", nil)
	bumpAll(t, ctx, a, ids)
	st := a.Status()
	if st.State != cluster.MemberReady || st.Address != a.Address() || len(st.Members) != 1 {
		t.Fatalf("status of one member: %+v", st)
	}
	self := st.Members[0]
	if !self.Self || !slices.Contains(self.Kinds, "tally") || !slices.Contains(self.Devices, "cpu") || len(self.Identities["tally"]) != len(ids) {
		t.Fatalf("self %+v", self)
	}
	if len(st.Moves) != len(ids) || st.Moves[0].Event != cluster.MoveActivated || st.Moves[0].Identity != ids[0] {
		t.Fatalf("moves %+v", st.Moves)
	}

	b := tallyMember(t, "status", []string{a.Address()})
	waitTopology(t, a, 2)
	waitTopology(t, b, 2)
	onB := 0
	for _, r := range bumpAll(t, ctx, a, ids) {
		if r.Member == b.Address() {
			onB++
		}
	}
	st = a.Status()
	if len(st.Members) != 2 {
		t.Fatalf("members %+v", st.Members)
	}
	moved := 0
	for _, mv := range st.Moves {
		if mv.Event == cluster.MovePassivated && mv.To == b.Address() && mv.State {
			moved++
		}
	}
	if moved != onB || len(st.Members[0].Identities["tally"])+len(st.Members[1].Identities["tally"]) != len(ids)-onB {
		t.Fatalf("%d identities on b, %d moves to it; members %+v", onB, moved, st.Members)
	}
	for _, m := range st.Members {
		if !m.Self && (m.State != cluster.MemberReady || m.Address != b.Address() || m.Identities != nil) {
			t.Fatalf("the other member %+v", m)
		}
	}

	closeMember(t, b)
	waitTopology(t, a, 1)
	st = a.Status()
	lost := false
	for _, m := range st.Members {
		lost = lost || (m.Address == b.Address() && m.State == cluster.MemberLost && !m.Since.IsZero())
	}
	if !lost || len(st.Members) != 2 {
		t.Fatalf("after b left: %+v", st.Members)
	}
}
