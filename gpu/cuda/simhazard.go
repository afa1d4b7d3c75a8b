//go:build linux && cgo

package cuda

import (
	"unsafe"

	"github.com/ringactor/ringactor/gpu/cuda/hostsim"
)

// The simulated device's hazard model (hostsim.Hazards) and its
// stream-ordered allocator. Every driver call of fakeDevice goes through
// the model: in strict mode, the default of NewSimulatedBackend, a call
// that would wait forever beside a running ring kernel on a GPU fails with
// a *hostsim.HazardError naming the call and the ring.

// SimulatedHazards returns the hazard model of a backend from
// NewSimulatedBackend (strict mode unless changed with SetMode), or nil
// for any other backend.
func SimulatedHazards(b *Backend) *hostsim.Hazards {
	if fd, ok := b.sim.(*fakeDevice); ok {
		return fd.hz
	}
	return nil
}

// streamID is the identity the model knows a stream by (0: the NULL
// stream).
func streamID(s Stream) uint64 { return uint64(uintptr(s.p)) }

// HasStreamOrderedAlloc is true unless the test turned the pool off (to
// exercise the fallback).
func (f *fakeDevice) HasStreamOrderedAlloc() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.noPool
}

// fakePool is the simulated default memory pool.
type fakePool struct{ threshold uint64 }

func (f *fakeDevice) DeviceGetDefaultMemPool(Device) (MemPool, error) {
	if err := f.hz.Call("cuDeviceGetDefaultMemPool"); err != nil {
		return MemPool{}, err
	}
	return MemPool{unsafe.Pointer(&f.pool)}, nil
}

func (f *fakeDevice) MemPoolSetReleaseThreshold(pool MemPool, bytes uint64) error {
	if err := f.hz.Call("cuMemPoolSetAttribute"); err != nil {
		return err
	}
	if pool.p != unsafe.Pointer(&f.pool) {
		return fakeErr("cuMemPoolSetAttribute", ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", "unknown pool")
	}
	f.mu.Lock()
	f.pool.threshold = bytes
	f.mu.Unlock()
	return nil
}

// MemAllocFromPoolAsync allocates at once (the memory is valid for work
// enqueued later on s, as on a GPU) without synchronising anything.
func (f *fakeDevice) MemAllocFromPoolAsync(bytes uint64, pool MemPool, s Stream) (DevicePtr, error) {
	if err := f.hz.Call("cuMemAllocFromPoolAsync"); err != nil {
		return 0, err
	}
	if pool.p != unsafe.Pointer(&f.pool) {
		return 0, fakeErr("cuMemAllocFromPoolAsync", ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", "unknown pool")
	}
	if _, err := f.stream(s); err != nil {
		return 0, err
	}
	f.mu.Lock()
	f.asyncAllocs++
	f.mu.Unlock()
	return f.allocDevice("cuMemAllocFromPoolAsync", bytes)
}

// MemFreeAsync frees p when the stream reaches it.
func (f *fakeDevice) MemFreeAsync(p DevicePtr, s Stream) error {
	if err := f.hz.Call("cuMemFreeAsync"); err != nil {
		return err
	}
	return f.submit("cuMemFreeAsync", s, nil, func() error {
		if err := f.sim.Free(uint64(p)); err != nil {
			return fakeErr("cuMemFreeAsync", ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", err.Error())
		}
		return nil
	})
}
