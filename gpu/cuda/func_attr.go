package cuda

import "github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"

// Per-function attributes and stream priorities: optional parts of a
// [DeviceAPI] (*[Driver] and the simulated device implement both). The
// backend type-asserts them: it sets a persistent entry's shared-memory
// carveout, raises a one-shot kernel's dynamic shared memory above 48 KiB
// ([Backend.SharedMemoryProbe]), and creates its one-shot stream at the
// greatest priority and ring streams at the least (docs/device.md,
// "Priorities and shared memory beside persistent kernels").

// FuncAttribute is a CUfunction_attribute.
type FuncAttribute = driverapi.FuncAttribute

// Function attributes (values of cuda.h's CUfunction_attribute).
const (
	FuncAttrMaxThreadsPerBlock            = driverapi.FuncAttrMaxThreadsPerBlock
	FuncAttrSharedSizeBytes               = driverapi.FuncAttrSharedSizeBytes
	FuncAttrConstSizeBytes                = driverapi.FuncAttrConstSizeBytes
	FuncAttrLocalSizeBytes                = driverapi.FuncAttrLocalSizeBytes
	FuncAttrNumRegs                       = driverapi.FuncAttrNumRegs
	FuncAttrPTXVersion                    = driverapi.FuncAttrPTXVersion
	FuncAttrBinaryVersion                 = driverapi.FuncAttrBinaryVersion
	FuncAttrCacheModeCA                   = driverapi.FuncAttrCacheModeCA
	FuncAttrMaxDynamicSharedSizeBytes     = driverapi.FuncAttrMaxDynamicSharedSizeBytes
	FuncAttrPreferredSharedMemoryCarveout = driverapi.FuncAttrPreferredSharedMemoryCarveout
)

// Values of FuncAttrPreferredSharedMemoryCarveout (cudaSharedCarveout).
const (
	SharedmemCarveoutDefault   = driverapi.SharedmemCarveoutDefault   // no preference
	SharedmemCarveoutMaxL1     = driverapi.SharedmemCarveoutMaxL1     // the least shared memory, the most L1
	SharedmemCarveoutMaxShared = driverapi.SharedmemCarveoutMaxShared // the most shared memory
)

// DefaultMaxDynamicShared is a function's FuncAttrMaxDynamicSharedSizeBytes
// before it is raised: 48 KiB (less its static shared memory).
const DefaultMaxDynamicShared = driverapi.DefaultMaxDynamicShared

// AttrMaxSharedMemoryPerBlockOptin is
// CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: the most shared
// memory a block may use once its function opted in: 227 KiB on an H100.
const AttrMaxSharedMemoryPerBlockOptin = driverapi.AttrMaxSharedMemoryPerBlockOptin

// FuncAttributeAPI is the per-function attributes of the driver
// (cuFuncGetAttribute, cuFuncSetAttribute), an optional part of a
// [DeviceAPI].
type FuncAttributeAPI = driverapi.FuncAttributeAPI

// StreamPriorityAPI is the stream priorities of the driver
// (cuCtxGetStreamPriorityRange, cuStreamCreateWithPriority; numerically
// lower is higher priority), an optional part of a [DeviceAPI].
type StreamPriorityAPI = driverapi.StreamPriorityAPI

var (
	_ FuncAttributeAPI  = (*Driver)(nil)
	_ StreamPriorityAPI = (*Driver)(nil)
)
