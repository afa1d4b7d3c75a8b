//go:build linux && cgo

package cuda

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "driver_cgo.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
)

// Driver is a loaded libcuda.so.1: the resolved entry points and thin
// wrappers of them. Obtain it from [Load] (or a [Context]). Each wrapper
// returns nil or a *[DriverError]. Wrappers that need a current context
// must be called inside [Context.Do].
type Driver struct {
	api  *C.rc_cuda_api
	path string
}

// openDriver dlopens path and resolves the entry points. On failure it
// returns a reason for a DeviceUnavailable error.
func openDriver(path string) (*Driver, string) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var errbuf, libbuf [1024]C.char
	var stage C.int
	api := C.rc_cuda_open(cpath, &stage, &errbuf[0], C.size_t(len(errbuf)), &libbuf[0], C.size_t(len(libbuf)))
	if api == nil {
		msg := C.GoString(&errbuf[0])
		switch stage {
		case C.RC_OPEN_DLOPEN:
			return nil, fmt.Sprintf("%s not found: %s", path, msg)
		case C.RC_OPEN_DLSYM:
			return nil, fmt.Sprintf("%s is too old: %s", path, msg)
		}
		return nil, fmt.Sprintf("loading %s: %s", path, msg)
	}
	return &Driver{api: api, path: C.GoString(&libbuf[0])}, ""
}

// symbolNames lists the entry points the loader resolves, in table order.
func symbolNames() []string {
	n := int(C.rc_cuda_symbol_count())
	names := make([]string, n)
	for i := range names {
		names[i] = C.GoString(C.rc_cuda_symbol_name(C.int(i)))
	}
	return names
}

// Path returns the file the library was loaded from.
func (d *Driver) Path() string { return d.path }

func (d *Driver) check(call string, r C.CUresult) error {
	if r == 0 {
		return nil
	}
	return d.newError(call, int(r))
}

func (d *Driver) newError(call string, code int) *DriverError {
	e := &DriverError{Call: call, Code: code}
	if s := C.rc_cuGetErrorName(d.api, C.CUresult(code)); s != nil {
		e.Name = C.GoString(s)
	}
	if s := C.rc_cuGetErrorString(d.api, C.CUresult(code)); s != nil {
		e.Message = C.GoString(s)
	}
	return e
}

// ErrorName returns cuGetErrorName(code), or "" for an unknown code.
func (d *Driver) ErrorName(code Result) string {
	if s := C.rc_cuGetErrorName(d.api, C.CUresult(code)); s != nil {
		return C.GoString(s)
	}
	return ""
}

// ErrorString returns cuGetErrorString(code), or "" for an unknown code.
func (d *Driver) ErrorString(code Result) string {
	if s := C.rc_cuGetErrorString(d.api, C.CUresult(code)); s != nil {
		return C.GoString(s)
	}
	return ""
}

// Init calls cuInit(flags). [Load] has already done it with flags 0.
func (d *Driver) Init(flags uint32) error {
	return d.check("cuInit", C.rc_cuInit(d.api, C.uint(flags)))
}

// DriverGetVersion returns the CUDA version the driver supports, as
// 1000*major + 10*minor (12020 is 12.2). It works before cuInit.
func (d *Driver) DriverGetVersion() (int, error) {
	var v C.int
	err := d.check("cuDriverGetVersion", C.rc_cuDriverGetVersion(d.api, &v))
	return int(v), err
}

// DeviceGetCount returns the number of devices.
func (d *Driver) DeviceGetCount() (int, error) {
	var n C.int
	err := d.check("cuDeviceGetCount", C.rc_cuDeviceGetCount(d.api, &n))
	return int(n), err
}

// DeviceGet returns the handle of device ordinal.
func (d *Driver) DeviceGet(ordinal int) (Device, error) {
	var dev C.CUdevice
	err := d.check("cuDeviceGet", C.rc_cuDeviceGet(d.api, &dev, C.int(ordinal)))
	return Device(dev), err
}

// DeviceGetName returns the device's marketing name.
func (d *Driver) DeviceGetName(dev Device) (string, error) {
	var buf [256]C.char
	if err := d.check("cuDeviceGetName", C.rc_cuDeviceGetName(d.api, &buf[0], C.int(len(buf)), C.CUdevice(dev))); err != nil {
		return "", err
	}
	buf[len(buf)-1] = 0
	return C.GoString(&buf[0]), nil
}

// DeviceGetAttribute returns one attribute of dev.
func (d *Driver) DeviceGetAttribute(attr DeviceAttribute, dev Device) (int, error) {
	var v C.int
	err := d.check("cuDeviceGetAttribute", C.rc_cuDeviceGetAttribute(d.api, &v, C.CUdevice_attribute(attr), C.CUdevice(dev)))
	return int(v), err
}

// DeviceTotalMem returns the device's memory in bytes.
func (d *Driver) DeviceTotalMem(dev Device) (uint64, error) {
	var n C.size_t
	err := d.check("cuDeviceTotalMem_v2", C.rc_cuDeviceTotalMem(d.api, &n, C.CUdevice(dev)))
	return uint64(n), err
}

// DevicePrimaryCtxRetain retains dev's primary context.
func (d *Driver) DevicePrimaryCtxRetain(dev Device) (CtxHandle, error) {
	var c C.CUcontext
	err := d.check("cuDevicePrimaryCtxRetain", C.rc_cuDevicePrimaryCtxRetain(d.api, &c, C.CUdevice(dev)))
	return driverapi.CtxHandleFromRaw(unsafe.Pointer(c)), err
}

// DevicePrimaryCtxRelease releases dev's primary context.
func (d *Driver) DevicePrimaryCtxRelease(dev Device) error {
	return d.check("cuDevicePrimaryCtxRelease_v2", C.rc_cuDevicePrimaryCtxRelease(d.api, C.CUdevice(dev)))
}

// CtxSetCurrent makes c current on the calling OS thread (the null handle
// unbinds). Use it only on a [Context]'s thread.
func (d *Driver) CtxSetCurrent(c CtxHandle) error {
	return d.check("cuCtxSetCurrent", C.rc_cuCtxSetCurrent(d.api, C.CUcontext(c.Raw())))
}

// CtxSynchronize waits for all work of the current context.
func (d *Driver) CtxSynchronize() error {
	return d.check("cuCtxSynchronize", C.rc_cuCtxSynchronize(d.api))
}

// jitLogSize is the size of each JIT log buffer.
const jitLogSize = 16 << 10

// ModuleLoadData loads a PTX (or cubin/fatbin) image into the current
// context with cuModuleLoadDataEx, collecting the JIT's info and error logs
// (verbose adds register and spill counts to the info log). A PTX image
// need not be NUL-terminated.
func (d *Driver) ModuleLoadData(image []byte, verbose bool) (Module, JITLog, error) {
	if len(image) == 0 || image[len(image)-1] != 0 {
		image = append(append(make([]byte, 0, len(image)+1), image...), 0)
	}
	info := make([]C.char, jitLogSize)
	elog := make([]C.char, jitLogSize)
	var m C.CUmodule
	v := C.int(0)
	if verbose {
		v = 1
	}
	r := C.rc_cuModuleLoadDataEx(d.api, &m, unsafe.Pointer(&image[0]),
		&info[0], C.size_t(len(info)), &elog[0], C.size_t(len(elog)), v)
	info[len(info)-1], elog[len(elog)-1] = 0, 0
	log := JITLog{Info: C.GoString(&info[0]), Error: C.GoString(&elog[0])}
	return driverapi.ModuleFromRaw(unsafe.Pointer(m)), log, d.check("cuModuleLoadDataEx", r)
}

// ModuleUnload unloads m.
func (d *Driver) ModuleUnload(m Module) error {
	return d.check("cuModuleUnload", C.rc_cuModuleUnload(d.api, C.CUmodule(m.Raw())))
}

// ModuleGetFunction returns the kernel name of m (its extern "C" name).
func (d *Driver) ModuleGetFunction(m Module, name string) (Function, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var f C.CUfunction
	err := d.check("cuModuleGetFunction", C.rc_cuModuleGetFunction(d.api, &f, C.CUmodule(m.Raw()), cname))
	return driverapi.FunctionFromRaw(unsafe.Pointer(f)), err
}

// LaunchKernel enqueues f on s with the given grid, block and dynamic shared
// memory. Each argument is one kernel parameter of at most 8 bytes (see
// [ArgPtr], [ArgF32] and the other Arg helpers); the driver copies them
// before LaunchKernel returns.
func (d *Driver) LaunchKernel(f Function, grid, block Dim3, sharedMem uint32, s Stream, args ...uint64) error {
	if len(args) > MaxKernelArgs {
		return &DriverError{Call: "cuLaunchKernel", Code: int(ErrInvalidValue), Name: "CUDA_ERROR_INVALID_VALUE",
			Message: fmt.Sprintf("%d kernel parameters, at most %d supported", len(args), MaxKernelArgs)}
	}
	g, b := grid.Norm(), block.Norm()
	var argp *C.ulonglong
	if len(args) > 0 {
		argp = (*C.ulonglong)(unsafe.Pointer(&args[0]))
	}
	return d.check("cuLaunchKernel", C.rc_cuLaunchKernel(d.api, C.CUfunction(f.Raw()),
		C.uint(g.X), C.uint(g.Y), C.uint(g.Z), C.uint(b.X), C.uint(b.Y), C.uint(b.Z),
		C.uint(sharedMem), C.CUstream(s.Raw()), argp, C.int(len(args))))
}

// StreamCreate creates a stream with flags ([StreamNonBlocking] or 0).
func (d *Driver) StreamCreate(flags uint32) (Stream, error) {
	var s C.CUstream
	err := d.check("cuStreamCreate", C.rc_cuStreamCreate(d.api, &s, C.uint(flags)))
	return driverapi.StreamFromRaw(unsafe.Pointer(s)), err
}

// StreamDestroy destroys s.
func (d *Driver) StreamDestroy(s Stream) error {
	return d.check("cuStreamDestroy_v2", C.rc_cuStreamDestroy(d.api, C.CUstream(s.Raw())))
}

// StreamSynchronize waits for all work enqueued on s.
func (d *Driver) StreamSynchronize(s Stream) error {
	return d.check("cuStreamSynchronize", C.rc_cuStreamSynchronize(d.api, C.CUstream(s.Raw())))
}

// StreamQuery reports, without waiting, whether the work enqueued on s has
// completed: nil when it has (CUDA_SUCCESS), a *DriverError with
// [ErrNotReady] while some is still running or queued, and otherwise the
// error of work that failed (CUDA_ERROR_ILLEGAL_ADDRESS,
// CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_ASSERT…: sticky for the context).
// It does not synchronise anything, so it is safe beside a running
// persistent kernel.
func (d *Driver) StreamQuery(s Stream) error {
	return d.check("cuStreamQuery", C.rc_cuStreamQuery(d.api, C.CUstream(s.Raw())))
}

// EventCreate creates an event with flags ([EventDisableTiming] and others).
func (d *Driver) EventCreate(flags uint32) (Event, error) {
	var e C.CUevent
	err := d.check("cuEventCreate", C.rc_cuEventCreate(d.api, &e, C.uint(flags)))
	return driverapi.EventFromRaw(unsafe.Pointer(e)), err
}

// EventRecord records e on s.
func (d *Driver) EventRecord(e Event, s Stream) error {
	return d.check("cuEventRecord", C.rc_cuEventRecord(d.api, C.CUevent(e.Raw()), C.CUstream(s.Raw())))
}

// EventSynchronize waits until e has completed.
func (d *Driver) EventSynchronize(e Event) error {
	return d.check("cuEventSynchronize", C.rc_cuEventSynchronize(d.api, C.CUevent(e.Raw())))
}

// EventElapsedTime returns the milliseconds between two completed events.
func (d *Driver) EventElapsedTime(start, end Event) (float32, error) {
	var ms C.float
	err := d.check("cuEventElapsedTime", C.rc_cuEventElapsedTime(d.api, &ms, C.CUevent(start.Raw()), C.CUevent(end.Raw())))
	return float32(ms), err
}

// EventDestroy destroys e.
func (d *Driver) EventDestroy(e Event) error {
	return d.check("cuEventDestroy_v2", C.rc_cuEventDestroy(d.api, C.CUevent(e.Raw())))
}

// MemAlloc allocates bytes of device memory.
func (d *Driver) MemAlloc(bytes uint64) (DevicePtr, error) {
	var p C.CUdeviceptr
	err := d.check("cuMemAlloc_v2", C.rc_cuMemAlloc(d.api, &p, C.size_t(bytes)))
	return DevicePtr(p), err
}

// MemFree frees device memory from MemAlloc.
func (d *Driver) MemFree(p DevicePtr) error {
	return d.check("cuMemFree_v2", C.rc_cuMemFree(d.api, C.CUdeviceptr(p)))
}

// MemHostAlloc allocates bytes of page-locked host memory outside the Go
// heap; flags [MemHostAllocPortable]|[MemHostAllocDeviceMap] gives memory
// that every context can map (see [Driver.MemHostGetDevicePointer]). Free it
// with MemFreeHost; view it with unsafe.Slice.
func (d *Driver) MemHostAlloc(bytes uint64, flags uint32) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	err := d.check("cuMemHostAlloc", C.rc_cuMemHostAlloc(d.api, &p, C.size_t(bytes), C.uint(flags)))
	return p, err
}

// MemFreeHost frees memory from MemHostAlloc.
func (d *Driver) MemFreeHost(p unsafe.Pointer) error {
	return d.check("cuMemFreeHost", C.rc_cuMemFreeHost(d.api, p))
}

// MemHostGetDevicePointer returns the device address of mapped host memory
// p (flags must be 0).
func (d *Driver) MemHostGetDevicePointer(p unsafe.Pointer, flags uint32) (DevicePtr, error) {
	var dp C.CUdeviceptr
	err := d.check("cuMemHostGetDevicePointer_v2", C.rc_cuMemHostGetDevicePointer(d.api, &dp, p, C.uint(flags)))
	return DevicePtr(dp), err
}

// MemcpyHtoDAsync enqueues a copy of bytes from host src to device dst on s.
// The copy runs after the call returns, so src must stay valid and
// unchanged until s is synchronised; it must be memory outside the Go heap
// (from MemHostAlloc), as cgo forbids C from keeping Go pointers.
func (d *Driver) MemcpyHtoDAsync(dst DevicePtr, src unsafe.Pointer, bytes uint64, s Stream) error {
	return d.check("cuMemcpyHtoDAsync_v2", C.rc_cuMemcpyHtoDAsync(d.api, C.CUdeviceptr(dst), src, C.size_t(bytes), C.CUstream(s.Raw())))
}

// MemcpyDtoHAsync enqueues a copy of bytes from device src to host dst on s.
// dst follows the rules of MemcpyHtoDAsync's src.
func (d *Driver) MemcpyDtoHAsync(dst unsafe.Pointer, src DevicePtr, bytes uint64, s Stream) error {
	return d.check("cuMemcpyDtoHAsync_v2", C.rc_cuMemcpyDtoHAsync(d.api, dst, C.CUdeviceptr(src), C.size_t(bytes), C.CUstream(s.Raw())))
}

// MemGetInfo returns the free and total memory of the current context's
// device, in bytes.
func (d *Driver) MemGetInfo() (free, total uint64, err error) {
	var f, t C.size_t
	err = d.check("cuMemGetInfo_v2", C.rc_cuMemGetInfo(d.api, &f, &t))
	return uint64(f), uint64(t), err
}

// HasStreamOrderedAlloc reports whether the driver has the stream-ordered
// allocator's entry points (CUDA 11.2+): cuDeviceGetDefaultMemPool,
// cuMemPoolSetAttribute, cuMemAllocFromPoolAsync and cuMemFreeAsync. They
// are optional: a driver without them loads, and their wrappers return
// CUDA_ERROR_NOT_SUPPORTED.
func (d *Driver) HasStreamOrderedAlloc() bool { return C.rc_cuda_has_stream_ordered(d.api) != 0 }

// DeviceGetDefaultMemPool returns dev's default memory pool.
func (d *Driver) DeviceGetDefaultMemPool(dev Device) (MemPool, error) {
	var p C.CUmemoryPool
	err := d.check("cuDeviceGetDefaultMemPool", C.rc_cuDeviceGetDefaultMemPool(d.api, &p, C.CUdevice(dev)))
	return driverapi.MemPoolFromRaw(unsafe.Pointer(p)), err
}

// MemPoolSetReleaseThreshold sets pool's CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
// the bytes of freed memory the pool keeps instead of giving them back to
// the system at the next synchronisation (math.MaxUint64: keep all).
func (d *Driver) MemPoolSetReleaseThreshold(pool MemPool, bytes uint64) error {
	return d.check("cuMemPoolSetAttribute", C.rc_cuMemPoolSetReleaseThreshold(d.api, C.CUmemoryPool(pool.Raw()), C.ulonglong(bytes)))
}

// MemAllocFromPoolAsync allocates bytes of device memory from pool,
// ordered on s: the memory may be used by work enqueued on s after this
// call. It does not synchronise with other streams.
func (d *Driver) MemAllocFromPoolAsync(bytes uint64, pool MemPool, s Stream) (DevicePtr, error) {
	var p C.CUdeviceptr
	err := d.check("cuMemAllocFromPoolAsync", C.rc_cuMemAllocFromPoolAsync(d.api, &p, C.size_t(bytes), C.CUmemoryPool(pool.Raw()), C.CUstream(s.Raw())))
	return DevicePtr(p), err
}

// MemFreeAsync frees p back to its pool once the work enqueued on s before
// it has finished. It does not synchronise with other streams.
func (d *Driver) MemFreeAsync(p DevicePtr, s Stream) error {
	return d.check("cuMemFreeAsync", C.rc_cuMemFreeAsync(d.api, C.CUdeviceptr(p), C.CUstream(s.Raw())))
}

// OccupancyMaxActiveBlocksPerMultiprocessor returns how many blocks of f
// (block threads, smem bytes of dynamic shared memory) an SM keeps
// resident at once (cuOccupancyMaxActiveBlocksPerMultiprocessor). It sizes
// a ring program's persistent grid.
func (d *Driver) OccupancyMaxActiveBlocksPerMultiprocessor(f Function, block int, smem uint32) (int, error) {
	var n C.int
	err := d.check("cuOccupancyMaxActiveBlocksPerMultiprocessor",
		C.rc_cuOccupancyMaxActiveBlocksPerMultiprocessor(d.api, &n, C.CUfunction(f.Raw()), C.int(block), C.size_t(smem)))
	return int(n), err
}

// FuncGetAttribute returns attribute attr of f (cuFuncGetAttribute): its
// register use (FuncAttrNumRegs), static shared memory
// (FuncAttrSharedSizeBytes), the most dynamic shared memory a launch may
// ask for (FuncAttrMaxDynamicSharedSizeBytes)…
func (d *Driver) FuncGetAttribute(f Function, attr FuncAttribute) (int, error) {
	var v C.int
	err := d.check("cuFuncGetAttribute", C.rc_cuFuncGetAttribute(d.api, &v, C.CUfunction_attribute(attr), C.CUfunction(f.Raw())))
	return int(v), err
}

// FuncSetAttribute sets attribute attr of f to v (cuFuncSetAttribute): the
// settable ones are FuncAttrMaxDynamicSharedSizeBytes and
// FuncAttrPreferredSharedMemoryCarveout. It applies to later launches of f.
func (d *Driver) FuncSetAttribute(f Function, attr FuncAttribute, v int) error {
	return d.check("cuFuncSetAttribute", C.rc_cuFuncSetAttribute(d.api, C.CUfunction(f.Raw()), C.CUfunction_attribute(attr), C.int(v)))
}

// CtxGetStreamPriorityRange returns the current context's stream priorities
// (cuCtxGetStreamPriorityRange): least and greatest, numerically lower
// being higher priority (an H100: 0 and -5). Both are 0 on a device
// without stream priorities.
func (d *Driver) CtxGetStreamPriorityRange() (least, greatest int, err error) {
	var l, g C.int
	err = d.check("cuCtxGetStreamPriorityRange", C.rc_cuCtxGetStreamPriorityRange(d.api, &l, &g))
	return int(l), int(g), err
}

// StreamCreateWithPriority creates a stream with flags ([StreamNonBlocking]
// or 0) and priority (cuStreamCreateWithPriority; the driver clamps it to
// CtxGetStreamPriorityRange). The block scheduler starts pending blocks of
// higher-priority streams first; it preempts no running block.
func (d *Driver) StreamCreateWithPriority(flags uint32, priority int) (Stream, error) {
	var s C.CUstream
	err := d.check("cuStreamCreateWithPriority", C.rc_cuStreamCreateWithPriority(d.api, &s, C.uint(flags), C.int(priority)))
	return driverapi.StreamFromRaw(unsafe.Pointer(s)), err
}

// optionalSymbolNames lists the optional entry points, in table order.
func optionalSymbolNames() []string {
	n := int(C.rc_cuda_optional_count())
	names := make([]string, n)
	for i := range names {
		names[i] = C.GoString(C.rc_cuda_optional_name(C.int(i)))
	}
	return names
}
