//go:build linux && cgo

package simdevice

import (
	"unsafe"

	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/cuda/hostsim"
)

// The simulated device's hazard model (hostsim.Hazards) and its
// stream-ordered allocator. Every driver call of Device goes through
// the model: in strict mode, the default of NewDevice, a call
// that would wait forever beside a running ring kernel on a GPU fails with
// a *hostsim.HazardError naming the call and the ring.

// Hazards returns the device's hazard model (strict mode unless changed
// with SetMode).
func (f *Device) Hazards() *hostsim.Hazards { return f.hz }

// Sim returns the hostsim device under f: its memory, launch counts and
// pinned allocations, for tests.
func (f *Device) Sim() *hostsim.Device { return f.sim }

// ModuleLoads counts the ModuleLoadData calls that succeeded.
func (f *Device) ModuleLoads() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.loads
}

// DisablePool makes the device report no stream-ordered allocator, so a
// backend opened on it afterwards takes its fallback (cuMemAlloc and
// cuMemFree in device epochs).
func (f *Device) DisablePool() {
	f.mu.Lock()
	f.noPool = true
	f.mu.Unlock()
}

// MappedReads counts the host-memory loads of the ring program whose
// function fn is (a function LoadHostProgram returned), 0 for another.
func (f *Device) MappedReads(fn cuda.Function) uint64 {
	if fn.IsNil() {
		return 0
	}
	if p := (*fakeFunc)(fn.Raw()).prog; p != nil {
		return p.MappedReads()
	}
	return 0
}

// streamID is the identity the model knows a stream by (0: the NULL
// stream).
func streamID(s cuda.Stream) uint64 { return uint64(uintptr(s.Raw())) }

// HasStreamOrderedAlloc is true unless the test turned the pool off (to
// exercise the fallback).
func (f *Device) HasStreamOrderedAlloc() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.noPool
}

// fakePool is the simulated default memory pool.
type fakePool struct{ threshold uint64 }

// DeviceGetDefaultMemPool is cuDeviceGetDefaultMemPool: the simulated default pool.
func (f *Device) DeviceGetDefaultMemPool(cuda.Device) (cuda.MemPool, error) {
	if err := f.hz.Call("cuDeviceGetDefaultMemPool"); err != nil {
		return cuda.MemPool{}, err
	}
	return cuda.MemPoolFromRaw(unsafe.Pointer(&f.pool)), nil
}

// MemPoolSetReleaseThreshold is cuMemPoolSetAttribute of the release threshold.
func (f *Device) MemPoolSetReleaseThreshold(pool cuda.MemPool, bytes uint64) error {
	if err := f.hz.Call("cuMemPoolSetAttribute"); err != nil {
		return err
	}
	if pool.Raw() != unsafe.Pointer(&f.pool) {
		return fakeErr("cuMemPoolSetAttribute", cuda.ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", "unknown pool")
	}
	f.mu.Lock()
	f.pool.threshold = bytes
	f.mu.Unlock()
	return nil
}

// MemAllocFromPoolAsync allocates at once (the memory is valid for work
// enqueued later on s, as on a GPU) without synchronising anything.
func (f *Device) MemAllocFromPoolAsync(bytes uint64, pool cuda.MemPool, s cuda.Stream) (cuda.DevicePtr, error) {
	if err := f.hz.Call("cuMemAllocFromPoolAsync"); err != nil {
		return 0, err
	}
	if pool.Raw() != unsafe.Pointer(&f.pool) {
		return 0, fakeErr("cuMemAllocFromPoolAsync", cuda.ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", "unknown pool")
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
func (f *Device) MemFreeAsync(p cuda.DevicePtr, s cuda.Stream) error {
	if err := f.hz.Call("cuMemFreeAsync"); err != nil {
		return err
	}
	return f.submit("cuMemFreeAsync", s, nil, func() error {
		if err := f.sim.Free(uint64(p)); err != nil {
			return fakeErr("cuMemFreeAsync", cuda.ErrInvalidValue, "CUDA_ERROR_INVALID_VALUE", err.Error())
		}
		return nil
	})
}
