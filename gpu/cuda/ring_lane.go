package cuda

import (
	"fmt"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/internal/ringrt"
)

// RingLane is a device lane: the replies of one mailbox go into a
// single-producer ring in device memory that another mailbox of the same
// device reads besides its input ring, and the producer wakes the
// consumer on the device (gpu/ring's lane.go has the protocol).
type RingLane = ringrt.Lane

// RingLaneConfig shapes a device lane: its capacity in slots (default
// 16) and the upstream's stage number, which its errors carry to the
// chain's tail (ring.FlagOriginShift).
type RingLaneConfig = ringrt.LaneConfig

// ErrLaneCycle is wrapped by LinkMailboxes' error when the lane would
// close a cycle of lanes.
var ErrLaneCycle = ringrt.ErrLaneCycle

// LinkMailboxes routes up's replies into a device lane that down reads:
// both mailboxes of ring program grids of this backend (OpenMailbox), up's
// reply size down's request size, up given no message yet and not linked
// yet, down reading fewer than ring.LaneSlotsMax lanes. A cycle is refused
// with ErrLaneCycle, other misuse with gpu.ErrArgument; no driver call but
// a copy on the backend's stream. Once down finishes (its terminate), up's
// replies come out of up's own output ring again, for the host to relay.
func (b *Backend) LinkMailboxes(up, down *RingKernel, cfg RingLaneConfig) (*RingLane, error) {
	rt, err := b.rings()
	if err != nil {
		return nil, err
	}
	if rt == nil {
		return nil, fmt.Errorf("cuda: the backend runs no ring programs: %w", gpu.ErrArgument)
	}
	return rt.Link(up, down, cfg)
}
