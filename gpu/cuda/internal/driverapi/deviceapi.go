package driverapi

import "unsafe"

// DeviceAPI is the part of the driver a cuda.Backend uses: memory, copies,
// modules, launches, streams, events and device attributes. The driver
// binding (cuda.Driver) implements it; so does a cuda.HostDevice — the
// simulated device of package gpu/cuda/simdevice, on which the backend's
// own code (allocation, argument packing, launch shapes, copies, ring
// programs) runs on machines without a GPU. Every method except
// DeviceGetAttribute needs the context current, so the backend calls it
// inside cuda.Context.Do (or, for a HostDevice, on the backend's own
// locked thread).
type DeviceAPI interface {
	DeviceGetAttribute(attr DeviceAttribute, dev Device) (int, error)
	MemGetInfo() (free, total uint64, err error)

	MemAlloc(bytes uint64) (DevicePtr, error)
	MemFree(p DevicePtr) error
	MemHostAlloc(bytes uint64, flags uint32) (unsafe.Pointer, error)
	MemFreeHost(p unsafe.Pointer) error
	MemHostGetDevicePointer(p unsafe.Pointer, flags uint32) (DevicePtr, error)
	MemcpyHtoDAsync(dst DevicePtr, src unsafe.Pointer, bytes uint64, s Stream) error
	MemcpyDtoHAsync(dst unsafe.Pointer, src DevicePtr, bytes uint64, s Stream) error

	ModuleLoadData(image []byte, verbose bool) (Module, JITLog, error)
	ModuleGetFunction(m Module, name string) (Function, error)
	ModuleUnload(m Module) error
	LaunchKernel(f Function, grid, block Dim3, sharedMem uint32, s Stream, args ...uint64) error

	StreamCreate(flags uint32) (Stream, error)
	StreamSynchronize(s Stream) error
	StreamQuery(s Stream) error
	StreamDestroy(s Stream) error

	EventCreate(flags uint32) (Event, error)
	EventRecord(e Event, s Stream) error
	EventSynchronize(e Event) error
	EventElapsedTime(start, end Event) (float32, error)
	EventDestroy(e Event) error
}

// AsyncAllocAPI is the stream-ordered allocator of the driver. The driver
// binding implements it; a DeviceAPI that implements it too (the
// simulated device) gets the backend's pool path instead of the fallback
// (cuMemAlloc / cuMemFree in device epochs). gpu/cuda re-exports it.
type AsyncAllocAPI interface {
	HasStreamOrderedAlloc() bool
	DeviceGetDefaultMemPool(dev Device) (MemPool, error)
	MemPoolSetReleaseThreshold(pool MemPool, bytes uint64) error
	MemAllocFromPoolAsync(bytes uint64, pool MemPool, s Stream) (DevicePtr, error)
	MemFreeAsync(p DevicePtr, s Stream) error
}
