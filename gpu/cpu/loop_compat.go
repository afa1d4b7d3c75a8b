package cpu

import "github.com/ringactor/ringactor/gpu/ring"

// The persistent loop and its wait machinery moved to gpu/ring; these
// names keep old code compiling.

// Loop is one ring kernel's persistent consumer.
//
// Deprecated: use ring.Loop.
type Loop = ring.Loop

// WaitStrategy says how an idle loop waits: spins, yields, an optional
// sleep phase, then a park. Its Spins and Yields fields are the old ones.
//
// Deprecated: use ring.WaitStrategy.
type WaitStrategy = ring.WaitStrategy

// DefaultWaitStrategy yields up to 128 times before parking.
//
// Deprecated: use ring.DefaultWaitStrategy.
var DefaultWaitStrategy = ring.DefaultWaitStrategy

// Signal wakes a parked loop.
//
// Deprecated: use ring.Signal.
type Signal = ring.Signal

// NewSignal returns a ready signal.
//
// Deprecated: use ring.NewSignal.
func NewSignal() *ring.Signal { return ring.NewSignal() }
