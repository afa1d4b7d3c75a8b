package gpu

import (
	"context"
	"reflect"
)

// DeviceMemory is one allocation in a device's memory, as a device backend
// hands it to a UnifiedBuffer. Copies start at the beginning of the
// allocation; an allocation may be larger than the buffer that uses it (a
// pool rounds sizes up to a power of two).
//
// A UnifiedBuffer calls these methods from one goroutine at a time, but
// different allocations of the same backend may be used concurrently.
type DeviceMemory interface {
	// Size is the size of the allocation in bytes.
	Size() int
	// CopyFromHost copies src (len(src) <= Size()) to the start of the
	// allocation, host → device. It returns once src may be reused.
	CopyFromHost(ctx context.Context, src []byte) error
	// CopyToHost copies len(dst) (<= Size()) bytes from the start of the
	// allocation into dst, device → host. It returns once dst holds them.
	CopyToHost(ctx context.Context, dst []byte) error
	// Free releases the allocation. It is called at most once by this
	// package.
	Free() error
}

// Allocator allocates device memory: one per device of a backend.
//
// Buffers and pools tell allocators apart with ==, so an Allocator should
// be a comparable type (a pointer, typically); a pool keeps no device memory
// for an allocator that is not, and a buffer then compares Names.
type Allocator interface {
	// Name names the backend and device, e.g. "cuda:0".
	Name() string
	// Alloc allocates at least bytes bytes of device memory. An allocation
	// that does not fit is a *DeviceError of kind DeviceOutOfMemory
	// (errors.Is(err, ErrOutOfMemory)).
	Alloc(ctx context.Context, bytes int) (DeviceMemory, error)
}

// comparableAllocator reports whether a may be compared with == and used
// as a map key without a run-time panic.
func comparableAllocator(a Allocator) bool {
	return a != nil && reflect.TypeOf(a).Comparable()
}

// sameAllocator reports whether a and b are the same allocator: equal
// values when comparable, equal names otherwise.
func sameAllocator(a, b Allocator) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	if !comparableAllocator(a) {
		return a.Name() == b.Name()
	}
	return a == b
}
