//go:build linux && cgo

package hostsim

/*
#include <stdlib.h>
#include "hostsim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"
)

// Errors of a simulated [Device]. They mirror the driver statuses a real
// device would return (out of memory, invalid value, not found, busy).
var (
	// ErrDeviceOutOfMemory: an allocation would exceed the device's memory.
	ErrDeviceOutOfMemory = errors.New("hostsim: simulated device out of memory")
	// ErrBadAddress: an address or range is not inside one allocation.
	ErrBadAddress = errors.New("hostsim: address outside every allocation")
	// ErrUnknownKernel: no kernel of that entry name.
	ErrUnknownKernel = errors.New("hostsim: unknown kernel entry")
	// ErrBadLaunch: wrong parameter count or launch shape.
	ErrBadLaunch = errors.New("hostsim: bad kernel launch")
)

// Device is a simulated CUDA device for tests on machines without a GPU.
// Its "device memory" is C heap memory and a device pointer is the host
// address of that memory as an integer, so copies are memcpy and the
// kernels of kernels/oneshot.cu, compiled for the host (see host_shim.h),
// run on it through [Device.Launch] with the parameter slots a
// cuLaunchKernel caller packs, and ring programs through
// [Device.LaunchProgram]. Mapped host memory
// ([Device.HostAlloc]) has a device pointer equal to its host address.
//
// Every address and range handed to it is checked against its live
// allocations, so a backend that copies past an allocation or frees twice
// gets an error instead of corrupting memory. It is safe for concurrent
// use; one-shot launches run one at a time.
type Device struct {
	mu       sync.Mutex
	limit    uint64
	used     uint64
	dev      map[uint64]uint64 // device allocations: address -> size
	host     map[uint64]uint64 // mapped host allocations: address -> size
	launches map[string]int
}

// NewDevice returns a simulated device with memBytes of device memory.
func NewDevice(memBytes uint64) *Device {
	return &Device{limit: memBytes, dev: map[uint64]uint64{}, host: map[uint64]uint64{}, launches: map[string]int{}}
}

// TotalMem is the device's memory in bytes.
func (d *Device) TotalMem() uint64 { return d.limit }

// Used returns the number of live device allocations and their bytes.
func (d *Device) Used() (allocs int, bytes uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.dev), d.used
}

// HostAllocs returns the number of live mapped host allocations.
func (d *Device) HostAllocs() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.host)
}

// Launches returns how many times entry was launched.
func (d *Device) Launches(entry string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.launches[entry]
}

// Alloc allocates bytes (> 0) of device memory, 64-byte aligned and zeroed.
func (d *Device) Alloc(bytes uint64) (uint64, error) {
	if bytes == 0 {
		return 0, fmt.Errorf("%w: zero-byte allocation", ErrBadLaunch)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.used+bytes > d.limit {
		return 0, fmt.Errorf("%w: %d bytes requested, %d of %d in use", ErrDeviceOutOfMemory, bytes, d.used, d.limit)
	}
	p := C.rc_hs_alloc(C.size_t(bytes))
	if p == nil {
		return 0, fmt.Errorf("%w: malloc of %d bytes failed", ErrDeviceOutOfMemory, bytes)
	}
	a := uint64(uintptr(p))
	d.dev[a] = bytes
	d.used += bytes
	return a, nil
}

// Free frees device memory from Alloc.
func (d *Device) Free(p uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	n, ok := d.dev[p]
	if !ok {
		return fmt.Errorf("%w: free of %#x", ErrBadAddress, p)
	}
	delete(d.dev, p)
	d.used -= n
	C.rc_hs_free_addr(C.uint64_t(p))
	return nil
}

// HostAlloc allocates bytes of "pinned, mapped" host memory (C memory,
// zeroed); its device pointer is [Device.DevicePointer].
func (d *Device) HostAlloc(bytes uint64) (unsafe.Pointer, error) {
	p := C.rc_hs_alloc(C.size_t(bytes))
	if p == nil {
		return nil, fmt.Errorf("%w: host allocation of %d bytes failed", ErrDeviceOutOfMemory, bytes)
	}
	d.mu.Lock()
	d.host[uint64(uintptr(p))] = bytes
	d.mu.Unlock()
	return p, nil
}

// HostFree frees memory from HostAlloc.
func (d *Device) HostFree(p unsafe.Pointer) error {
	d.mu.Lock()
	_, ok := d.host[uint64(uintptr(p))]
	delete(d.host, uint64(uintptr(p)))
	d.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: host free of %p", ErrBadAddress, p)
	}
	C.rc_hs_free(p)
	return nil
}

// DevicePointer returns the device address of p, which must lie inside a
// HostAlloc allocation.
func (d *Device) DevicePointer(p unsafe.Pointer) (uint64, error) {
	a := uint64(uintptr(p))
	if err := d.check(a, 1); err != nil {
		return 0, err
	}
	return a, nil
}

// check reports whether [a, a+n) lies inside one live allocation.
func (d *Device) check(a, n uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, m := range []map[uint64]uint64{d.dev, d.host} {
		for base, size := range m {
			if a >= base && a-base <= size && n <= size-(a-base) {
				return nil
			}
		}
	}
	return fmt.Errorf("%w: [%#x, +%d)", ErrBadAddress, a, n)
}

// CopyIn copies n bytes from host memory src to device address dst.
func (d *Device) CopyIn(dst uint64, src unsafe.Pointer, n uint64) error {
	if n == 0 {
		return nil
	}
	if err := d.check(dst, n); err != nil {
		return err
	}
	C.rc_hs_copy_in(C.uint64_t(dst), src, C.size_t(n))
	return nil
}

// CopyOut copies n bytes from device address src to host memory dst.
func (d *Device) CopyOut(dst unsafe.Pointer, src uint64, n uint64) error {
	if n == 0 {
		return nil
	}
	if err := d.check(src, n); err != nil {
		return err
	}
	C.rc_hs_copy_out(dst, C.uint64_t(src), C.size_t(n))
	return nil
}

// KernelParams returns the parameter count of kernel entry, or false when
// the simulated device has no such kernel.
func (d *Device) KernelParams(entry string) (int, bool) {
	cname := C.CString(entry)
	defer C.free(unsafe.Pointer(cname))
	n := int(C.rc_hs_kernel_params(cname))
	return n, n >= 0
}

// Launch runs kernel entry over grid × block (each component ≥ 1, at most
// 1024 threads a block) with its parameters packed one per 8-byte slot. It
// returns when the kernel has finished. (Persistent ring kernels are
// programs: see LaunchProgram.)
func (d *Device) Launch(entry string, grid, block [3]uint32, args []uint64) error {
	return d.LaunchSmem(entry, grid, block, 0, args)
}

// LaunchSmem is Launch with smem bytes of dynamic shared memory per block
// (host_shim.h's launch_smem: a zeroed buffer each block reaches through
// extern __shared__).
func (d *Device) LaunchSmem(entry string, grid, block [3]uint32, smem uint32, args []uint64) error {
	cname := C.CString(entry)
	defer C.free(unsafe.Pointer(cname))
	var ap *C.uint64_t
	if len(args) > 0 {
		ap = (*C.uint64_t)(unsafe.Pointer(&args[0]))
	}
	d.mu.Lock()
	d.launches[entry]++
	d.mu.Unlock()
	rc := C.rc_hs_launch(cname, C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]),
		C.uint(block[0]), C.uint(block[1]), C.uint(block[2]), C.size_t(smem), ap, C.int(len(args)))
	switch rc {
	case C.RC_HS_LAUNCH_OK:
		return nil
	case C.RC_HS_LAUNCH_UNKNOWN:
		return fmt.Errorf("%w: %q", ErrUnknownKernel, entry)
	case C.RC_HS_LAUNCH_NARGS:
		return fmt.Errorf("%w: %q with %d parameters", ErrBadLaunch, entry, len(args))
	case C.RC_HS_LAUNCH_SHAPE:
		return fmt.Errorf("%w: %q grid %v block %v", ErrBadLaunch, entry, grid, block)
	}
	return fmt.Errorf("%w: %q: status %d", ErrBadLaunch, entry, int(rc))
}
