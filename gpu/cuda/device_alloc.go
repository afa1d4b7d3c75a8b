package cuda

import (
	"context"
	"math"
	"unsafe"
)

// Device memory without synchronisation. cuMemAlloc is a launch barrier
// and cuMemFree synchronises the whole device: beside a persistent ring
// kernel the first holds back every later launch and the second waits
// forever. So the backend allocates Execute scratch and UnifiedBuffer
// device memory with the stream-ordered allocator (CUDA 11.2+):
// cuMemAllocFromPoolAsync / cuMemFreeAsync on the backend's own stream,
// from the device's default memory pool with its release threshold set to
// keep all freed memory (cuMemPoolSetAttribute
// CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = UINT64_MAX), so the pool does not
// hand memory back to the system at synchronisations either.
//
// Fallback, on a driver without those entry points or a device without
// memory pools (CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 0):
// cuMemAlloc and cuMemFree, each made in a device epoch (epoch.go) when
// rings are live. Correct, but every allocation and free then parks the
// rings; EpochStats shows how often.

// AsyncAllocAPI is the stream-ordered allocator of the driver. *[Driver]
// implements it; a [DeviceAPI] that implements it too (the simulated
// device) gets the backend's pool path instead of the fallback.
type AsyncAllocAPI interface {
	HasStreamOrderedAlloc() bool
	DeviceGetDefaultMemPool(dev Device) (MemPool, error)
	MemPoolSetReleaseThreshold(pool MemPool, bytes uint64) error
	MemAllocFromPoolAsync(bytes uint64, pool MemPool, s Stream) (DevicePtr, error)
	MemFreeAsync(p DevicePtr, s Stream) error
}

var _ AsyncAllocAPI = (*Driver)(nil)

// memState is the device's allocation state: the memory pool (nil when
// the fallback is used) and the pinned arena. Thread-confined.
type memState struct {
	async AsyncAllocAPI // nil: the fallback (cuMemAlloc / cuMemFree in epochs)
	pool  MemPool
	arena *arena
}

// openMemory sets up the pool, if the driver and device have one, and
// reserves the pinned arena (inside Do, before any ring runs).
func (d *device) openMemory(dev Device, arenaBytes uintptr) error {
	if a, ok := d.api.(AsyncAllocAPI); ok && a.HasStreamOrderedAlloc() {
		if v, err := d.api.DeviceGetAttribute(AttrMemoryPoolsSupported, dev); err == nil && v != 0 {
			pool, err := a.DeviceGetDefaultMemPool(dev)
			if err == nil {
				err = a.MemPoolSetReleaseThreshold(pool, math.MaxUint64)
			}
			if err != nil {
				return err
			}
			d.mem.async, d.mem.pool = a, pool
		}
	}
	d.mem.arena = newArena()
	if arenaBytes == 0 {
		arenaBytes = DefaultArenaBytes
	}
	return d.mem.arena.add(d.api, arenaBytes)
}

// StreamOrderedAlloc reports whether the backend allocates device memory
// with the stream-ordered allocator (false: the fallback, see
// device_alloc.go; or no device).
func (b *Backend) StreamOrderedAlloc() bool {
	d, err := b.device()
	if err != nil {
		return false
	}
	var ok bool
	_ = d.do(func() error { ok = d.mem.async != nil; return nil })
	return ok
}

// devAlloc allocates device memory usable by work enqueued on the
// backend's stream from now on (inside Do).
func (d *device) devAlloc(bytes uint64) (DevicePtr, error) {
	if d.mem.async != nil {
		return d.mem.async.MemAllocFromPoolAsync(bytes, d.mem.pool, d.stream)
	}
	var p DevicePtr
	err := d.epoch(context.Background(), "cuMemAlloc_v2", func() error {
		var err error
		p, err = d.api.MemAlloc(bytes)
		return err
	})
	return p, err
}

// devFree frees device memory once the work enqueued on the backend's
// stream before it has finished (inside Do).
func (d *device) devFree(p DevicePtr) error {
	if d.mem.async != nil {
		return d.mem.async.MemFreeAsync(p, d.stream)
	}
	return d.epoch(context.Background(), "cuMemFree_v2", func() error {
		if err := d.api.StreamSynchronize(d.stream); err != nil {
			return err
		}
		return d.api.MemFree(p)
	})
}

// pinned returns n bytes of the pinned arena and their device address,
// growing the arena (in a device epoch) when it is full (inside Do). The
// memory is not zeroed.
func (d *device) pinned(n uintptr) (unsafe.Pointer, DevicePtr, error) {
	if p, dp, ok := d.mem.arena.alloc(n); ok {
		return p, dp, nil
	}
	total, _ := d.mem.arena.reserved()
	grow := max(arenaRound(n), total/2, DefaultArenaBytes/4)
	err := d.epoch(context.Background(), "cuMemHostAlloc", func() error { return d.mem.arena.add(d.api, grow) })
	if err != nil {
		return nil, 0, err
	}
	d.mem.arena.grows++
	p, dp, _ := d.mem.arena.alloc(n)
	return p, dp, nil
}

// unpinned gives a block of the arena back (inside Do).
func (d *device) unpinned(p unsafe.Pointer) error { return d.mem.arena.free(p) }
