package cuda

import "unsafe"

// DeviceAPI is the part of the driver a [Backend] uses: memory, copies,
// modules, launches, streams, events and device attributes. *[Driver]
// implements it; so does a [HostDevice] — the simulated device of package
// gpu/cuda/simdevice, on which the backend's own code (allocation, argument
// packing, launch shapes, copies, ring programs) runs on machines without a
// GPU. Every method except DeviceGetAttribute needs the context current, so
// the backend calls it inside [Context.Do] (or, for a HostDevice, on the
// backend's own locked thread).
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

var _ DeviceAPI = (*Driver)(nil)

// runner runs functions on the thread that has the device's context
// current: a [Context] in production, a plain locked worker in tests.
type runner interface {
	Do(fn func() error) error
	Close() error
}

var _ runner = (*Context)(nil)
