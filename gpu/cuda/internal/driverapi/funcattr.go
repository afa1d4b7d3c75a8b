package driverapi

// FuncAttribute is a CUfunction_attribute: a per-function property that
// cuFuncGetAttribute reads and, for the settable ones, cuFuncSetAttribute
// changes.
type FuncAttribute int32

// Function attributes (values of cuda.h's CUfunction_attribute).
const (
	// FuncAttrMaxThreadsPerBlock is the most threads a block of the
	// function may have (its register use may make it less than the
	// device's 1024).
	FuncAttrMaxThreadsPerBlock FuncAttribute = 0
	// FuncAttrSharedSizeBytes is the function's static shared memory per
	// block (__shared__ variables), in bytes.
	FuncAttrSharedSizeBytes FuncAttribute = 1
	// FuncAttrConstSizeBytes is the function's user constant memory.
	FuncAttrConstSizeBytes FuncAttribute = 2
	// FuncAttrLocalSizeBytes is the function's local memory per thread.
	FuncAttrLocalSizeBytes FuncAttribute = 3
	// FuncAttrNumRegs is the registers each thread of the function uses.
	FuncAttrNumRegs FuncAttribute = 4
	// FuncAttrPTXVersion is the PTX virtual architecture the function was
	// compiled for (major*10+minor).
	FuncAttrPTXVersion FuncAttribute = 5
	// FuncAttrBinaryVersion is the binary architecture it runs as.
	FuncAttrBinaryVersion FuncAttribute = 6
	// FuncAttrCacheModeCA is whether it was compiled with -Xptxas -dlcm=ca.
	FuncAttrCacheModeCA FuncAttribute = 7
	// FuncAttrMaxDynamicSharedSizeBytes is the most dynamic shared memory a
	// launch of the function may ask for: 48 KiB (less its static shared
	// memory) until raised with cuFuncSetAttribute, at most the device's
	// AttrMaxSharedMemoryPerBlockOptin less the static shared memory. A
	// launch asking for more fails with CUDA_ERROR_INVALID_VALUE.
	FuncAttrMaxDynamicSharedSizeBytes FuncAttribute = 8
	// FuncAttrPreferredSharedMemoryCarveout is the function's preferred
	// split of the SM's unified L1/shared memory, as a percentage of the
	// most shared memory (0..100), or SharedmemCarveoutDefault. A hint the
	// driver may override.
	FuncAttrPreferredSharedMemoryCarveout FuncAttribute = 9
)

// Values of FuncAttrPreferredSharedMemoryCarveout (cudaSharedCarveout).
const (
	SharedmemCarveoutDefault   = -1  // no preference
	SharedmemCarveoutMaxL1     = 0   // the least shared memory, the most L1
	SharedmemCarveoutMaxShared = 100 // the most shared memory
)

// DefaultMaxDynamicShared is a function's FuncAttrMaxDynamicSharedSizeBytes
// before it is raised: 48 KiB (less its static shared memory).
const DefaultMaxDynamicShared = 48 << 10

// AttrMaxSharedMemoryPerBlockOptin is
// CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: the most shared
// memory a block may use once its function opted in
// (FuncAttrMaxDynamicSharedSizeBytes): 227 KiB on an H100.
const AttrMaxSharedMemoryPerBlockOptin DeviceAttribute = 97

// FuncAttributeAPI is the per-function attributes of the driver
// (cuFuncGetAttribute, cuFuncSetAttribute). The driver binding implements
// it, and so does the simulated device; it is optional for a DeviceAPI:
// callers type-assert it. Both calls need the context current.
type FuncAttributeAPI interface {
	FuncGetAttribute(f Function, attr FuncAttribute) (int, error)
	FuncSetAttribute(f Function, attr FuncAttribute, v int) error
}

// StreamPriorityAPI is the stream priorities of the driver
// (cuCtxGetStreamPriorityRange, cuStreamCreateWithPriority). Numerically
// lower is higher priority: an H100 reports least 0, greatest -5. The
// driver binding implements it, and so does the simulated device; it is
// optional for a DeviceAPI: callers type-assert it. Both calls need the
// context current.
type StreamPriorityAPI interface {
	CtxGetStreamPriorityRange() (least, greatest int, err error)
	StreamCreateWithPriority(flags uint32, priority int) (Stream, error)
}
