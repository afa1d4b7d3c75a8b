package cuda

import (
	"fmt"
	"unsafe"

	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
)

// LibraryEnv names the environment variable that overrides the driver
// library to load (default [DefaultLibrary]).
const LibraryEnv = "RINGACTOR_CUDA_LIBRARY"

// DefaultLibrary is the soname of the driver library.
const DefaultLibrary = "libcuda.so.1"

// The driver API's handle and value types, declared in package
// gpu/cuda/internal/driverapi (so that the device core and the ring
// runtime under this package can name them) and these names' home for
// users.
type (
	// Device is a CUdevice: a driver device handle, not necessarily equal
	// to the ordinal it was obtained from.
	Device = driverapi.Device
	// DevicePtr is a CUdeviceptr: an address in the device's (unified)
	// address space. It is a number, never dereferenced on the host.
	DevicePtr = driverapi.DevicePtr
	// CtxHandle is a CUcontext.
	CtxHandle = driverapi.CtxHandle
	// Module is a CUmodule: loaded PTX or cubin.
	Module = driverapi.Module
	// Function is a CUfunction: a kernel entry point of a Module.
	Function = driverapi.Function
	// Stream is a CUstream. The zero Stream is the legacy default stream.
	Stream = driverapi.Stream
	// Event is a CUevent.
	Event = driverapi.Event
	// MemPool is a CUmemoryPool handle: the pool the stream-ordered
	// allocator (cuMemAllocFromPoolAsync, cuMemFreeAsync) takes device
	// memory from.
	MemPool = driverapi.MemPool
	// Dim3 is a grid or block extent for [Driver.LaunchKernel]. A zero
	// component is treated as 1.
	Dim3 = driverapi.Dim3
	// DeviceAttribute is a CUdevice_attribute.
	DeviceAttribute = driverapi.DeviceAttribute
	// JITLog is the output of the PTX JIT compiler for
	// [Driver.ModuleLoadData].
	JITLog = driverapi.JITLog
)

// ModuleFromRaw wraps a CUmodule.
func ModuleFromRaw(p unsafe.Pointer) Module { return driverapi.ModuleFromRaw(p) }

// FunctionFromRaw wraps a CUfunction.
func FunctionFromRaw(p unsafe.Pointer) Function { return driverapi.FunctionFromRaw(p) }

// StreamFromRaw wraps a CUstream (nil: the legacy default stream).
func StreamFromRaw(p unsafe.Pointer) Stream { return driverapi.StreamFromRaw(p) }

// EventFromRaw wraps a CUevent.
func EventFromRaw(p unsafe.Pointer) Event { return driverapi.EventFromRaw(p) }

// MemPoolFromRaw wraps a CUmemoryPool.
func MemPoolFromRaw(p unsafe.Pointer) MemPool { return driverapi.MemPoolFromRaw(p) }

// MaxKernelArgs is the most parameters [Driver.LaunchKernel] passes.
const MaxKernelArgs = 64

// Kernel parameters are passed as 8-byte slots; the driver reads as many
// bytes of each slot as the kernel's parameter has (4 or 8), the low ones on
// a little-endian host. Parameters larger than 8 bytes are not supported.

// ArgPtr is a kernel parameter holding a device pointer.
func ArgPtr(p DevicePtr) uint64 { return uint64(p) }

// ArgU32 is a 32-bit unsigned kernel parameter.
func ArgU32(v uint32) uint64 { return uint64(v) }

// ArgI32 is a 32-bit signed kernel parameter.
func ArgI32(v int32) uint64 { return uint64(uint32(v)) }

// ArgU64 is a 64-bit unsigned kernel parameter.
func ArgU64(v uint64) uint64 { return v }

// ArgI64 is a 64-bit signed kernel parameter.
func ArgI64(v int64) uint64 { return uint64(v) }

// ArgF32 is a float kernel parameter.
func ArgF32(v float32) uint64 { return uint64(*(*uint32)(unsafe.Pointer(&v))) }

// ArgF64 is a double kernel parameter.
func ArgF64(v float64) uint64 { return *(*uint64)(unsafe.Pointer(&v)) }

// Device attributes (values of cuda.h's CUdevice_attribute).
const (
	AttrMaxThreadsPerBlock          = driverapi.AttrMaxThreadsPerBlock
	AttrMaxGridDimX                 = driverapi.AttrMaxGridDimX
	AttrMaxGridDimY                 = driverapi.AttrMaxGridDimY
	AttrMaxSharedMemoryPerBlock     = driverapi.AttrMaxSharedMemoryPerBlock
	AttrWarpSize                    = driverapi.AttrWarpSize
	AttrMultiprocessorCount         = driverapi.AttrMultiprocessorCount
	AttrKernelExecTimeout           = driverapi.AttrKernelExecTimeout
	AttrIntegrated                  = driverapi.AttrIntegrated
	AttrCanMapHostMemory            = driverapi.AttrCanMapHostMemory
	AttrMaxThreadsPerMultiprocessor = driverapi.AttrMaxThreadsPerMultiprocessor
	AttrUnifiedAddressing           = driverapi.AttrUnifiedAddressing
	AttrComputeCapabilityMajor      = driverapi.AttrComputeCapabilityMajor
	AttrComputeCapabilityMinor      = driverapi.AttrComputeCapabilityMinor
	AttrHostNativeAtomicSupported   = driverapi.AttrHostNativeAtomicSupported
	AttrPageableMemoryAccess        = driverapi.AttrPageableMemoryAccess
	AttrConcurrentManagedAccess     = driverapi.AttrConcurrentManagedAccess
	AttrCooperativeLaunch           = driverapi.AttrCooperativeLaunch
	// AttrMemoryPoolsSupported is CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
	// 1 when the device supports cuMemAllocAsync and memory pools.
	AttrMemoryPoolsSupported = driverapi.AttrMemoryPoolsSupported
)

// Flags of cuMemHostAlloc.
const (
	MemHostAllocPortable      uint32 = 0x01 // CU_MEMHOSTALLOC_PORTABLE
	MemHostAllocDeviceMap     uint32 = 0x02 // CU_MEMHOSTALLOC_DEVICEMAP
	MemHostAllocWriteCombined uint32 = 0x04 // CU_MEMHOSTALLOC_WRITECOMBINED
)

// Flags of cuStreamCreate.
const (
	StreamDefault     uint32 = driverapi.StreamDefault     // CU_STREAM_DEFAULT
	StreamNonBlocking uint32 = driverapi.StreamNonBlocking // CU_STREAM_NON_BLOCKING
)

// Flags of cuEventCreate.
const (
	EventDefault       uint32 = 0x0 // CU_EVENT_DEFAULT
	EventBlockingSync  uint32 = 0x1 // CU_EVENT_BLOCKING_SYNC
	EventDisableTiming uint32 = 0x2 // CU_EVENT_DISABLE_TIMING
)

// ComputeCapability is a device's SM version.
type ComputeCapability struct {
	Major, Minor int // 9.0 for an H100
}

// String formats the capability as "9.0".
func (c ComputeCapability) String() string { return fmt.Sprintf("%d.%d", c.Major, c.Minor) }
