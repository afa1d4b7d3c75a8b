package devcore

import (
	"context"
	"math"
	"unsafe"

	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
)

// DefaultArenaBytes is the pinned memory reserved when the device opens:
// room for the staging of two full copy chunks, or for 64 rings of 64
// slots of 4 KiB. gpu/cuda re-exports it.
const DefaultArenaBytes = 32 << 20

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
// cuMemAlloc and cuMemFree, each made in a device epoch when rings are
// live. Correct, but every allocation and free then parks the rings;
// EpochStats shows how often.

// memState is the device's allocation state: the memory pool (nil when
// the fallback is used) and the pinned arena. Thread-confined.
type memState struct {
	async driverapi.AsyncAllocAPI // nil: the fallback (cuMemAlloc / cuMemFree in epochs)
	pool  driverapi.MemPool
	arena *Arena
}

// openMemory sets up the pool, if the driver and device have one, and
// reserves the pinned arena (inside Do, before any ring runs).
func (d *Device) openMemory(dev driverapi.Device, arenaBytes uintptr) error {
	if a, ok := d.API.(driverapi.AsyncAllocAPI); ok && a.HasStreamOrderedAlloc() {
		if v, err := d.API.DeviceGetAttribute(driverapi.AttrMemoryPoolsSupported, dev); err == nil && v != 0 {
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
	d.mem.arena = NewArena()
	if arenaBytes == 0 {
		arenaBytes = DefaultArenaBytes
	}
	return d.mem.arena.Add(d.API, arenaBytes)
}

// StreamOrderedAlloc reports whether the device allocates with the
// stream-ordered allocator (false: the fallback; inside Do).
func (d *Device) StreamOrderedAlloc() bool { return d.mem.async != nil }

// DevAlloc allocates device memory usable by work enqueued on the
// backend's stream from now on (inside Do).
func (d *Device) DevAlloc(bytes uint64) (driverapi.DevicePtr, error) {
	if d.mem.async != nil {
		return d.mem.async.MemAllocFromPoolAsync(bytes, d.mem.pool, d.Stream)
	}
	var p driverapi.DevicePtr
	err := d.Epoch(context.Background(), "cuMemAlloc_v2", func() error {
		var err error
		p, err = d.API.MemAlloc(bytes)
		return err
	})
	return p, err
}

// DevFree frees device memory once the work enqueued on the backend's
// stream before it has finished (inside Do).
func (d *Device) DevFree(p driverapi.DevicePtr) error {
	if d.mem.async != nil {
		return d.mem.async.MemFreeAsync(p, d.Stream)
	}
	return d.Epoch(context.Background(), "cuMemFree_v2", func() error {
		if err := d.API.StreamSynchronize(d.Stream); err != nil {
			return err
		}
		return d.API.MemFree(p)
	})
}

// Pinned returns n bytes of the pinned arena and their device address,
// growing the arena (in a device epoch) when it is full (inside Do). The
// memory is not zeroed.
func (d *Device) Pinned(n uintptr) (unsafe.Pointer, driverapi.DevicePtr, error) {
	if p, dp, ok := d.mem.arena.Alloc(n); ok {
		return p, dp, nil
	}
	total, _ := d.mem.arena.Reserved()
	grow := max(ArenaRound(n), total/2, DefaultArenaBytes/4)
	err := d.Epoch(context.Background(), "cuMemHostAlloc", func() error { return d.mem.arena.Add(d.API, grow) })
	if err != nil {
		return nil, 0, err
	}
	d.mem.arena.Grows++
	p, dp, _ := d.mem.arena.Alloc(n)
	return p, dp, nil
}

// Unpinned gives a block of the arena back (inside Do).
func (d *Device) Unpinned(p unsafe.Pointer) error { return d.mem.arena.Free(p) }
