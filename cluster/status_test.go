//go:build !race

// Built without -race like cluster_test.go: several members in one process.

package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/gpu"
)

// unusableBackend is a compute backend without a device: Available says
// why, and it runs nothing.
type unusableBackend struct{}

func (unusableBackend) Name() string          { return "cuda:7" }
func (unusableBackend) Kind() gpu.BackendKind { return gpu.KindCUDA }
func (unusableBackend) Available() error {
	return &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: "cuda:7", Reason: "no device"}
}
func (unusableBackend) Supports(*gpu.KernelSpec, gpu.DType) bool { return false }
func (unusableBackend) Execute(context.Context, *gpu.KernelSpec, []*gpu.UnifiedBuffer, *gpu.UnifiedBuffer, []float64) error {
	return gpu.ErrDeviceNotAvailable
}
func (unusableBackend) ExecuteBatch(context.Context, *gpu.KernelSpec, [][]*gpu.UnifiedBuffer, []*gpu.UnifiedBuffer, []float64) error {
	return gpu.ErrDeviceNotAvailable
}
func (unusableBackend) Allocator() gpu.Allocator { return nil }

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
	a := tallyMember(t, "status", nil, cluster.WithRuntimeOptions(actors.WithBackends(unusableBackend{})))
	bumpAll(t, ctx, a, ids)
	st := a.Status()
	if st.State != cluster.MemberReady || st.Address != a.Address() || len(st.Members) != 1 {
		t.Fatalf("status of one member: %+v", st)
	}
	self := st.Members[0]
	if !self.Self || !slices.Contains(self.Devices, "cpu") || len(self.Identities["tally"]) != len(ids) {
		t.Fatalf("self %+v", self)
	}
	// Its kinds are its own only: not Proto.Actor's pubsub topic kind (nor
	// any other it registers by itself), nor the advertisement.
	if !slices.Equal(self.Kinds, []string{"tally"}) {
		t.Errorf("self kinds %q, want [tally]", self.Kinds)
	}
	// Its devices are the usable ones: not the backend without a device,
	// nor any other whose Available says it cannot run kernels.
	if slices.Contains(self.Devices, unusableBackend{}.Name()) {
		t.Errorf("self devices %q list the unusable %s", self.Devices, unusableBackend{}.Name())
	}
	for _, b := range a.Runtime().Backends() {
		if usable := b.Available() == nil; slices.Contains(self.Devices, b.Name()) != usable {
			t.Errorf("self devices %q; %s usable: %v", self.Devices, b.Name(), usable)
		}
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
