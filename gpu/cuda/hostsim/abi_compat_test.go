package hostsim

import (
	"errors"
	"testing"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/gpu/ringmsg"
)

// TestDeprecatedABINames is a compile check: hostsim's protocol names that
// moved to gpu/ring keep compiling and mean the same.
func TestDeprecatedABINames(t *testing.T) {
	var (
		_ *Word       = &ring.Word{}
		_ *RingHeader = &ring.RingHeader{}
		_ SlotHeader  = ring.SlotHeader{Flags: FlagReply | FlagError, Status: StatusOK}
		_ *Ring       = (*ring.SlotRing)(nil)
	)
	var m ring.TerminateMode = TerminateDrain
	if m != ring.TerminateDrain || TerminateNow != ring.TerminateNow || Terminated != ring.Terminated ||
		TerminatedBadLaunch != ring.TerminatedBadLaunch || StatusUnknownType != ring.StatusUnknownType ||
		StatusBadLength != ring.StatusBadLength || StatusBadArgs != ring.StatusBadArgs {
		t.Fatal("aliases differ from gpu/ring's names")
	}
}

// TestDeprecatedMessageKinds: the type ids the removed switch kernel
// dispatched on are gpu/ringmsg's ops' type ids.
func TestDeprecatedMessageKinds(t *testing.T) {
	for op, id := range map[ringmsg.Op]uint32{ringmsg.Add: MsgAdd, ringmsg.Mul: MsgMul, ringmsg.Scale: MsgScale, ringmsg.ReLU: MsgReLU,
		ringmsg.LeakyReLU: MsgLeakyReLU, ringmsg.Sum: MsgSum, ringmsg.Min: MsgMin, ringmsg.Max: MsgMax, ringmsg.SpMV: MsgSpMV} {
		if op.TypeID() != id {
			t.Errorf("%v: type id %d, hostsim %d", op, op.TypeID(), id)
		}
	}
}

// TestLaunchRemoved: the deprecated Launch still compiles and refuses
// every configuration with ErrLaunchRemoved; the zero Kernel's methods
// are harmless.
func TestLaunchRemoved(t *testing.T) {
	for _, cfg := range []Config{{}, {Capacity: 8, Threads: 2}, {Capacity: 3, SlotSize: -1, Threads: 1 << 20}} {
		k, err := Launch(cfg)
		if k != nil || !errors.Is(err, ErrLaunchRemoved) || !errors.Is(err, gpu.ErrArgument) {
			t.Fatalf("Launch(%+v) = %v, %v", cfg, k, err)
		}
	}
	var k Kernel
	k.Terminate(ring.TerminateNow)
	if k.Wait() != 0 || k.Control() != nil || k.Input() != nil || k.Output() != nil {
		t.Fatal("the zero Kernel reports a loop")
	}
	k.Close()
}
