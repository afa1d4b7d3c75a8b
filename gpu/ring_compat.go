package gpu

import "github.com/ringactor/ringactor/gpu/ring"

// The ring protocol moved to gpu/ring; these names keep old code compiling.

// Ring is a lock-free single-producer/single-consumer ring of T.
//
// Deprecated: use ring.Ring.
type Ring[T any] = ring.Ring[T]

// NewRing returns an empty ring of the given capacity.
//
// Deprecated: use ring.NewRing.
func NewRing[T any](capacity int) (*ring.Ring[T], error) { return ring.NewRing[T](capacity) }

// CapacityError reports a ring capacity that is not a power of two in range.
//
// Deprecated: use ring.CapacityError.
type CapacityError = ring.CapacityError

// MaxRingCapacity is the largest capacity a ring may have.
//
// Deprecated: use ring.MaxRingCapacity.
const MaxRingCapacity = ring.MaxRingCapacity

// ValidCapacity reports whether n can be a ring's capacity.
//
// Deprecated: use ring.ValidCapacity.
func ValidCapacity(n int) bool { return ring.ValidCapacity(n) }

// ControlBlock is the shared state of one ring kernel.
//
// Deprecated: use ring.ControlBlock.
type ControlBlock = ring.ControlBlock

// NewControlBlock returns a control block with the gate closed.
//
// Deprecated: use ring.NewControlBlock.
func NewControlBlock() *ring.ControlBlock { return ring.NewControlBlock() }

// Stats is a copy of a control block for observers.
//
// Deprecated: use ring.Stats.
type Stats = ring.Stats

// Gate values of a control block.
//
// Deprecated: use ring.GateClosed and ring.GateOpen.
const (
	GateClosed = ring.GateClosed
	GateOpen   = ring.GateOpen
)
