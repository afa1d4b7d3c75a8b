//go:build !linux || !cgo

package cuda

import "unsafe"

// Driver is a loaded libcuda.so.1. This build has no cgo layer (it needs
// linux and cgo), so no Driver is ever loaded and every method reports
// [errNoCgo].
type Driver struct{}

// errNoCgo is the reason this build cannot load the driver.
const errNoCgo = "this build has no CUDA driver binding (it needs linux and cgo)"

func openDriver(path string) (*Driver, string) { return nil, errNoCgo + "; not loading " + path }

func (d *Driver) err(call string) error {
	return &DriverError{Call: call, Code: int(ErrNotInitialized), Name: "CUDA_ERROR_NOT_INITIALIZED", Message: errNoCgo}
}

// Path returns the file the library was loaded from.
func (d *Driver) Path() string { return "" }

// ErrorName returns cuGetErrorName(code), or "" for an unknown code.
func (d *Driver) ErrorName(code Result) string {
	return ""
}

// ErrorString returns cuGetErrorString(code), or "" for an unknown code.
func (d *Driver) ErrorString(code Result) string {
	return ""
}

// Init calls cuInit(flags). [Load] has already done it with flags 0.
func (d *Driver) Init(flags uint32) error {
	return d.err("cuInit")
}

// DriverGetVersion returns the CUDA version the driver supports, as
// 1000*major + 10*minor (12020 is 12.2). It works before cuInit.
func (d *Driver) DriverGetVersion() (int, error) {
	return 0, d.err("cuDriverGetVersion")
}

// DeviceGetCount returns the number of devices.
func (d *Driver) DeviceGetCount() (int, error) {
	return 0, d.err("cuDeviceGetCount")
}

// DeviceGet returns the handle of device ordinal.
func (d *Driver) DeviceGet(ordinal int) (Device, error) {
	return Device(0), d.err("cuDeviceGet")
}

// DeviceGetName returns the device's marketing name.
func (d *Driver) DeviceGetName(dev Device) (string, error) {
	return "", d.err("cuDeviceGetName")
}

// DeviceGetAttribute returns one attribute of dev.
func (d *Driver) DeviceGetAttribute(attr DeviceAttribute, dev Device) (int, error) {
	return 0, d.err("cuDeviceGetAttribute")
}

// DeviceTotalMem returns the device's memory in bytes.
func (d *Driver) DeviceTotalMem(dev Device) (uint64, error) {
	return 0, d.err("cuDeviceTotalMem_v2")
}

// DevicePrimaryCtxRetain retains dev's primary context.
func (d *Driver) DevicePrimaryCtxRetain(dev Device) (CtxHandle, error) {
	return CtxHandle{}, d.err("cuDevicePrimaryCtxRetain")
}

// DevicePrimaryCtxRelease releases dev's primary context.
func (d *Driver) DevicePrimaryCtxRelease(dev Device) error {
	return d.err("cuDevicePrimaryCtxRelease_v2")
}

// CtxSetCurrent makes c current on the calling OS thread (the null handle
// unbinds). Use it only on a [Context]'s thread.
func (d *Driver) CtxSetCurrent(c CtxHandle) error {
	return d.err("cuCtxSetCurrent")
}

// CtxSynchronize waits for all work of the current context.
func (d *Driver) CtxSynchronize() error {
	return d.err("cuCtxSynchronize")
}

// ModuleLoadData loads a PTX (or cubin/fatbin) image into the current
// context with cuModuleLoadDataEx, collecting the JIT's info and error logs
// (verbose adds register and spill counts to the info log). A PTX image
// need not be NUL-terminated.
func (d *Driver) ModuleLoadData(image []byte, verbose bool) (Module, JITLog, error) {
	return Module{}, JITLog{}, d.err("cuModuleLoadDataEx")
}

// ModuleUnload unloads m.
func (d *Driver) ModuleUnload(m Module) error {
	return d.err("cuModuleUnload")
}

// ModuleGetFunction returns the kernel name of m (its extern "C" name).
func (d *Driver) ModuleGetFunction(m Module, name string) (Function, error) {
	return Function{}, d.err("cuModuleGetFunction")
}

// LaunchKernel enqueues f on s with the given grid, block and dynamic shared
// memory. Each argument is one kernel parameter of at most 8 bytes (see
// [ArgPtr], [ArgF32] and the other Arg helpers); the driver copies them
// before LaunchKernel returns.
func (d *Driver) LaunchKernel(f Function, grid, block Dim3, sharedMem uint32, s Stream, args ...uint64) error {
	return d.err("cuLaunchKernel")
}

// StreamCreate creates a stream with flags ([StreamNonBlocking] or 0).
func (d *Driver) StreamCreate(flags uint32) (Stream, error) {
	return Stream{}, d.err("cuStreamCreate")
}

// StreamDestroy destroys s.
func (d *Driver) StreamDestroy(s Stream) error {
	return d.err("cuStreamDestroy_v2")
}

// StreamSynchronize waits for all work enqueued on s.
func (d *Driver) StreamSynchronize(s Stream) error {
	return d.err("cuStreamSynchronize")
}

// StreamQuery reports, without waiting, whether the work enqueued on s has
// completed: nil when it has, a *DriverError with [ErrNotReady] while some
// is still running, and otherwise the error of work that failed.
func (d *Driver) StreamQuery(s Stream) error {
	return d.err("cuStreamQuery")
}

// EventCreate creates an event with flags ([EventDisableTiming] and others).
func (d *Driver) EventCreate(flags uint32) (Event, error) {
	return Event{}, d.err("cuEventCreate")
}

// EventRecord records e on s.
func (d *Driver) EventRecord(e Event, s Stream) error {
	return d.err("cuEventRecord")
}

// EventSynchronize waits until e has completed.
func (d *Driver) EventSynchronize(e Event) error {
	return d.err("cuEventSynchronize")
}

// EventElapsedTime returns the milliseconds between two completed events.
func (d *Driver) EventElapsedTime(start, end Event) (float32, error) {
	return 0, d.err("cuEventElapsedTime")
}

// EventDestroy destroys e.
func (d *Driver) EventDestroy(e Event) error {
	return d.err("cuEventDestroy_v2")
}

// MemAlloc allocates bytes of device memory.
func (d *Driver) MemAlloc(bytes uint64) (DevicePtr, error) {
	return DevicePtr(0), d.err("cuMemAlloc_v2")
}

// MemFree frees device memory from MemAlloc.
func (d *Driver) MemFree(p DevicePtr) error {
	return d.err("cuMemFree_v2")
}

// MemHostAlloc allocates bytes of page-locked host memory outside the Go
// heap; flags [MemHostAllocPortable]|[MemHostAllocDeviceMap] gives memory
// that every context can map (see [Driver.MemHostGetDevicePointer]). Free it
// with MemFreeHost; view it with unsafe.Slice.
func (d *Driver) MemHostAlloc(bytes uint64, flags uint32) (unsafe.Pointer, error) {
	return nil, d.err("cuMemHostAlloc")
}

// MemFreeHost frees memory from MemHostAlloc.
func (d *Driver) MemFreeHost(p unsafe.Pointer) error {
	return d.err("cuMemFreeHost")
}

// MemHostGetDevicePointer returns the device address of mapped host memory
// p (flags must be 0).
func (d *Driver) MemHostGetDevicePointer(p unsafe.Pointer, flags uint32) (DevicePtr, error) {
	return DevicePtr(0), d.err("cuMemHostGetDevicePointer_v2")
}

// MemcpyHtoDAsync enqueues a copy of bytes from host src to device dst on s.
// The copy runs after the call returns, so src must stay valid and
// unchanged until s is synchronised; it must be memory outside the Go heap
// (from MemHostAlloc), as cgo forbids C from keeping Go pointers.
func (d *Driver) MemcpyHtoDAsync(dst DevicePtr, src unsafe.Pointer, bytes uint64, s Stream) error {
	return d.err("cuMemcpyHtoDAsync_v2")
}

// MemcpyDtoHAsync enqueues a copy of bytes from device src to host dst on s.
// dst follows the rules of MemcpyHtoDAsync's src.
func (d *Driver) MemcpyDtoHAsync(dst unsafe.Pointer, src DevicePtr, bytes uint64, s Stream) error {
	return d.err("cuMemcpyDtoHAsync_v2")
}

// MemGetInfo returns the free and total memory of the current context's
// device, in bytes.
func (d *Driver) MemGetInfo() (free, total uint64, err error) {
	return 0, 0, d.err("cuMemGetInfo_v2")
}

// HasStreamOrderedAlloc reports whether the driver has the stream-ordered
// allocator's entry points (CUDA 11.2+): cuDeviceGetDefaultMemPool,
// cuMemPoolSetAttribute, cuMemAllocFromPoolAsync and cuMemFreeAsync. They
// are optional: a driver without them loads, and their wrappers return
// CUDA_ERROR_NOT_SUPPORTED.
func (d *Driver) HasStreamOrderedAlloc() bool { return false }

// DeviceGetDefaultMemPool returns dev's default memory pool.
func (d *Driver) DeviceGetDefaultMemPool(dev Device) (MemPool, error) {
	return MemPool{}, d.err("cuDeviceGetDefaultMemPool")
}

// MemPoolSetReleaseThreshold sets pool's CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
// the bytes of freed memory the pool keeps instead of giving them back to
// the system at the next synchronisation (math.MaxUint64: keep all).
func (d *Driver) MemPoolSetReleaseThreshold(pool MemPool, bytes uint64) error {
	return d.err("cuMemPoolSetAttribute")
}

// MemAllocFromPoolAsync allocates bytes of device memory from pool,
// ordered on s: the memory may be used by work enqueued on s after this
// call. It does not synchronise with other streams.
func (d *Driver) MemAllocFromPoolAsync(bytes uint64, pool MemPool, s Stream) (DevicePtr, error) {
	return 0, d.err("cuMemAllocFromPoolAsync")
}

// OccupancyMaxActiveBlocksPerMultiprocessor returns how many blocks of f
// an SM keeps resident at once; without cgo it always fails.
func (d *Driver) OccupancyMaxActiveBlocksPerMultiprocessor(f Function, block int, smem uint32) (int, error) {
	return 0, d.err("cuOccupancyMaxActiveBlocksPerMultiprocessor")
}

// MemFreeAsync frees p back to its pool once the work enqueued on s before
// it has finished. It does not synchronise with other streams.
func (d *Driver) MemFreeAsync(p DevicePtr, s Stream) error {
	return d.err("cuMemFreeAsync")
}

// FuncGetAttribute returns attribute attr of f; without cgo it always
// fails.
func (d *Driver) FuncGetAttribute(f Function, attr FuncAttribute) (int, error) {
	return 0, d.err("cuFuncGetAttribute")
}

// FuncSetAttribute sets attribute attr of f; without cgo it always fails.
func (d *Driver) FuncSetAttribute(f Function, attr FuncAttribute, v int) error {
	return d.err("cuFuncSetAttribute")
}

// CtxGetStreamPriorityRange returns the context's stream priorities;
// without cgo it always fails.
func (d *Driver) CtxGetStreamPriorityRange() (least, greatest int, err error) {
	return 0, 0, d.err("cuCtxGetStreamPriorityRange")
}

// StreamCreateWithPriority creates a stream of a priority; without cgo it
// always fails.
func (d *Driver) StreamCreateWithPriority(flags uint32, priority int) (Stream, error) {
	return Stream{}, d.err("cuStreamCreateWithPriority")
}
