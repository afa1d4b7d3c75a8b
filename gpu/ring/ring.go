package ring

import (
	"fmt"
	"sync/atomic"
)

// CacheLine is the size the hot words of a ring or control block are padded
// to, so that the producer's and the consumer's words never share a line
// (RC_CACHE_LINE in the generated C header).
const CacheLine = 64

// Word is a 64-bit atomic word alone on its cache line (rc_padded_u64 in
// C). Every index and control word shared between a producer and a
// consumer, on the host or across PCIe, is a Word.
type Word struct {
	atomic.Uint64
	_ [CacheLine - 8]byte
}

// Ring is a lock-free single-producer/single-consumer ring of T.
//
// Exactly one goroutine may push at a time and exactly one may pop at a
// time; callers that have several producers serialise them (the kernel's
// admission lock does). Head and tail grow monotonically; Go's atomics give
// the acquire/release ordering the protocol needs, and the race detector
// sees the happens-before edge they create.
type Ring[T any] struct {
	_     [CacheLine]byte
	tail  Word // next index the producer writes; written by the producer only
	head  Word // next index the consumer reads; written by the consumer only
	mask  uint64
	slots []T

	// producer-local and consumer-local caches of the other side's index:
	// they save a cross-core load on most operations.
	cachedHead uint64
	_          [CacheLine - 8]byte
	cachedTail uint64
	_          [CacheLine - 8]byte
}

// CapacityError reports a ring capacity that is not a power of two in range.
type CapacityError struct {
	Capacity int
}

// MaxRingCapacity is the largest capacity a ring may have.
const MaxRingCapacity = 1 << 24

// Error implements error.
func (e *CapacityError) Error() string {
	return fmt.Sprintf("gpu: ring capacity %d is not a power of two in [2, %d]", e.Capacity, MaxRingCapacity)
}

// ValidCapacity reports whether n can be a ring's capacity.
func ValidCapacity(n int) bool {
	return n >= 2 && n <= MaxRingCapacity && n&(n-1) == 0
}

// NewRing returns an empty ring of the given capacity, which must be a power
// of two between 2 and MaxRingCapacity.
func NewRing[T any](capacity int) (*Ring[T], error) {
	if !ValidCapacity(capacity) {
		return nil, &CapacityError{Capacity: capacity}
	}
	return &Ring[T]{mask: uint64(capacity - 1), slots: make([]T, capacity)}, nil
}

// Cap returns the ring's capacity.
func (r *Ring[T]) Cap() int { return len(r.slots) }

// Len returns the number of messages in the ring. It is exact only when
// neither side is moving; observers use it as a gauge.
func (r *Ring[T]) Len() int {
	tail := r.tail.Load()
	head := r.head.Load()
	if tail < head { // a racing pop between the two loads
		return 0
	}
	return int(tail - head)
}

// TryPush appends v and reports whether there was room. Producer side only.
func (r *Ring[T]) TryPush(v T) bool {
	tail := r.tail.Load() // own index: no other writer
	if tail-r.cachedHead >= uint64(len(r.slots)) {
		r.cachedHead = r.head.Load() // acquire the consumer's progress
		if tail-r.cachedHead >= uint64(len(r.slots)) {
			return false
		}
	}
	r.slots[tail&r.mask] = v
	r.tail.Store(tail + 1) // release: the slot is visible before the index
	return true
}

// Claim returns the slot the next push fills, or nil when the ring is
// full: the producer writes its message there in place (no copy of it
// through the caller's frames) and makes it visible with Publish. Until
// then the consumer does not see the slot, and another Claim returns the
// same one. Producer side only.
func (r *Ring[T]) Claim() *T {
	tail := r.tail.Load() // own index: no other writer
	if tail-r.cachedHead >= uint64(len(r.slots)) {
		r.cachedHead = r.head.Load() // acquire the consumer's progress
		if tail-r.cachedHead >= uint64(len(r.slots)) {
			return nil
		}
	}
	return &r.slots[tail&r.mask]
}

// Publish makes the slot of the last Claim visible to the consumer, with one
// release store of the tail. Producer side only, after a Claim that
// returned a slot.
func (r *Ring[T]) Publish() {
	r.tail.Store(r.tail.Load() + 1) // release: the slot is visible before the index
}

// Pushed returns how many messages were ever pushed: the tail index, the
// position (modulo Cap) the next push takes. Producer side only.
func (r *Ring[T]) Pushed() uint64 { return r.tail.Load() }

// Free returns how many pushes would succeed now. Producer side only.
func (r *Ring[T]) Free() int {
	r.cachedHead = r.head.Load()
	return len(r.slots) - int(r.tail.Load()-r.cachedHead)
}

// TryPop removes the oldest message and reports whether there was one.
// Consumer side only. The slot is cleared so the ring keeps no garbage alive.
func (r *Ring[T]) TryPop() (T, bool) {
	var zero T
	head := r.head.Load()
	if head == r.cachedTail {
		r.cachedTail = r.tail.Load() // acquire the producer's writes
		if head == r.cachedTail {
			return zero, false
		}
	}
	i := head & r.mask
	v := r.slots[i]
	r.slots[i] = zero
	r.head.Store(head + 1) // release the slot back to the producer
	return v, true
}

// Pending acquires the producer's progress and returns how many messages
// the consumer can take now, without taking any: the start of a batch. The
// consumer reads them in place with Peek and gives their slots back with one
// Release, so a batch costs one acquire and one release however long it is
// (the LMAX Disruptor's batch consumption). Consumer side only.
func (r *Ring[T]) Pending() int {
	r.cachedTail = r.tail.Load()
	return int(r.cachedTail - r.head.Load())
}

// Peek returns the i-th pending message in place (0 is the oldest), for
// 0 <= i < Pending(). The pointer is valid until Release. Consumer side only.
func (r *Ring[T]) Peek(i int) *T {
	return &r.slots[(r.head.Load()+uint64(i))&r.mask]
}

// Release gives the n oldest pending messages' slots back to the producer
// with one release store, clearing them so the ring keeps no garbage alive.
// Consumer side only; n <= Pending().
func (r *Ring[T]) Release(n int) {
	if n <= 0 {
		return
	}
	var zero T
	head := r.head.Load()
	for i := range uint64(n) {
		r.slots[(head+i)&r.mask] = zero
	}
	r.head.Store(head + uint64(n)) // release: the slots are free
}

// Empty reports whether the consumer would find nothing. Consumer side only
// (or an observer that tolerates a stale answer).
func (r *Ring[T]) Empty() bool {
	return r.head.Load() == r.tail.Load()
}

// Indices returns the head and tail indices (for telemetry and tests).
func (r *Ring[T]) Indices() (head, tail uint64) {
	return r.head.Load(), r.tail.Load()
}
