package driverapi

// Device attributes (values of cuda.h's CUdevice_attribute).
const (
	AttrMaxThreadsPerBlock          DeviceAttribute = 1
	AttrMaxGridDimX                 DeviceAttribute = 5
	AttrMaxGridDimY                 DeviceAttribute = 6
	AttrMaxSharedMemoryPerBlock     DeviceAttribute = 8
	AttrWarpSize                    DeviceAttribute = 10
	AttrMultiprocessorCount         DeviceAttribute = 16
	AttrKernelExecTimeout           DeviceAttribute = 17
	AttrIntegrated                  DeviceAttribute = 18
	AttrCanMapHostMemory            DeviceAttribute = 19
	AttrMaxThreadsPerMultiprocessor DeviceAttribute = 39
	AttrUnifiedAddressing           DeviceAttribute = 41
	AttrComputeCapabilityMajor      DeviceAttribute = 75
	AttrComputeCapabilityMinor      DeviceAttribute = 76
	AttrHostNativeAtomicSupported   DeviceAttribute = 86
	AttrPageableMemoryAccess        DeviceAttribute = 88
	AttrConcurrentManagedAccess     DeviceAttribute = 89
	AttrCooperativeLaunch           DeviceAttribute = 95
	// AttrMemoryPoolsSupported is CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
	// 1 when the device supports cuMemAllocAsync and memory pools.
	AttrMemoryPoolsSupported DeviceAttribute = 115
)

// Attributes of the profile beyond those the launch shapes use.
const (
	AttrMaxSharedMemoryPerMultiprocessor DeviceAttribute = 81
	AttrMaxRegistersPerMultiprocessor    DeviceAttribute = 82
	AttrMaxBlocksPerMultiprocessor       DeviceAttribute = 106
	AttrReservedSharedMemoryPerBlock     DeviceAttribute = 111
)
