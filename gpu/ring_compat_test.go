package gpu

import (
	"errors"
	"testing"

	"github.com/ringactor/ringactor/gpu/ring"
)

// TestDeprecatedRingAliases is a compile check: code written against the
// ring protocol's old home in gpu keeps compiling and means the same.
func TestDeprecatedRingAliases(t *testing.T) {
	var r *Ring[int]
	r, err := NewRing[int](4)
	if err != nil || !r.TryPush(1) {
		t.Fatal(err)
	}
	var _ *ring.Ring[int] = r
	_, err = NewRing[int](3)
	var ce *CapacityError
	if !errors.As(err, &ce) || ValidCapacity(3) || !ValidCapacity(MaxRingCapacity) {
		t.Fatalf("capacity: %v", err)
	}
	var cb *ControlBlock = NewControlBlock()
	cb.Open()
	var s Stats = cb.Snapshot()
	if !s.Open || cb.Gate.Load() != GateOpen || GateClosed != ring.GateClosed {
		t.Fatal("gate")
	}
}
