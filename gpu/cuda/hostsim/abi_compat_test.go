package hostsim

import (
	"testing"

	"github.com/ringactor/ringactor/gpu/ring"
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
