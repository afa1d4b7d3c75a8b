package driverapi

import (
	"errors"
	"fmt"

	"github.com/ringactor/ringactor/gpu"
)

// Result is a CUresult, the status code of every driver call.
type Result int

// Driver status codes this package distinguishes (values of cuda.h). The
// test suite checks each name against the installed driver's
// cuGetErrorName.
const (
	Success                    Result = 0   // CUDA_SUCCESS
	ErrInvalidValue            Result = 1   // CUDA_ERROR_INVALID_VALUE
	ErrOutOfMemory             Result = 2   // CUDA_ERROR_OUT_OF_MEMORY
	ErrNotInitialized          Result = 3   // CUDA_ERROR_NOT_INITIALIZED
	ErrDeinitialized           Result = 4   // CUDA_ERROR_DEINITIALIZED
	ErrStubLibrary             Result = 34  // CUDA_ERROR_STUB_LIBRARY
	ErrDeviceUnavailable       Result = 46  // CUDA_ERROR_DEVICE_UNAVAILABLE
	ErrNoDevice                Result = 100 // CUDA_ERROR_NO_DEVICE
	ErrInvalidDevice           Result = 101 // CUDA_ERROR_INVALID_DEVICE
	ErrInvalidImage            Result = 200 // CUDA_ERROR_INVALID_IMAGE
	ErrInvalidContext          Result = 201 // CUDA_ERROR_INVALID_CONTEXT
	ErrNoBinaryForGPU          Result = 209 // CUDA_ERROR_NO_BINARY_FOR_GPU
	ErrInvalidPTX              Result = 218 // CUDA_ERROR_INVALID_PTX
	ErrJITCompilerNotFound     Result = 221 // CUDA_ERROR_JIT_COMPILER_NOT_FOUND
	ErrUnsupportedPTXVersion   Result = 222 // CUDA_ERROR_UNSUPPORTED_PTX_VERSION
	ErrInvalidHandle           Result = 400 // CUDA_ERROR_INVALID_HANDLE
	ErrNotFound                Result = 500 // CUDA_ERROR_NOT_FOUND
	ErrNotReady                Result = 600 // CUDA_ERROR_NOT_READY
	ErrIllegalAddress          Result = 700 // CUDA_ERROR_ILLEGAL_ADDRESS
	ErrLaunchOutOfResources    Result = 701 // CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
	ErrLaunchTimeout           Result = 702 // CUDA_ERROR_LAUNCH_TIMEOUT
	ErrAssert                  Result = 710 // CUDA_ERROR_ASSERT
	ErrIllegalInstruction      Result = 715 // CUDA_ERROR_ILLEGAL_INSTRUCTION
	ErrLaunchFailed            Result = 719 // CUDA_ERROR_LAUNCH_FAILED
	ErrNotPermitted            Result = 800 // CUDA_ERROR_NOT_PERMITTED
	ErrNotSupported            Result = 801 // CUDA_ERROR_NOT_SUPPORTED
	ErrSystemNotReady          Result = 802 // CUDA_ERROR_SYSTEM_NOT_READY
	ErrSystemDriverMismatch    Result = 803 // CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
	ErrCompatNotSupportedOnDev Result = 804 // CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE
	ErrUnknown                 Result = 999 // CUDA_ERROR_UNKNOWN
)

// DriverError is a driver call that returned a status other than
// CUDA_SUCCESS. Name and Message come from cuGetErrorName and
// cuGetErrorString; they are empty for a code the driver does not know.
//
// A DriverError is errors.Is-equal to gpu.ErrDevice and gpu.ErrCompute, and
// by [DriverError.Kind] to gpu.ErrOutOfMemory or gpu.ErrDeviceNotAvailable.
type DriverError struct {
	Call    string // the driver entry point, e.g. "cuMemAlloc_v2"
	Code    int    // the CUresult
	Name    string // e.g. "CUDA_ERROR_OUT_OF_MEMORY"
	Message string // e.g. "out of memory"
}

// Error implements error: "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory".
func (e *DriverError) Error() string {
	name := e.Name
	if name == "" {
		name = "CUresult"
	}
	s := fmt.Sprintf("%s: %s (%d)", e.Call, name, e.Code)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Result returns the status code.
func (e *DriverError) Result() Result { return Result(e.Code) }

// Kind classifies the status as a gpu.DeviceKind: out of memory; unavailable
// (no device, no or mismatched driver, not initialised); busy (not ready);
// otherwise failed.
func (e *DriverError) Kind() gpu.DeviceKind {
	switch Result(e.Code) {
	case ErrOutOfMemory:
		return gpu.DeviceOutOfMemory
	case ErrNotInitialized, ErrDeinitialized, ErrStubLibrary,
		ErrDeviceUnavailable, ErrNoDevice, ErrSystemNotReady, ErrSystemDriverMismatch,
		ErrCompatNotSupportedOnDev:
		return gpu.DeviceUnavailable
	case ErrNotReady:
		return gpu.DeviceBusyTransient
	}
	return gpu.DeviceFailed
}

// Is matches gpu.ErrDevice, gpu.ErrCompute and, by Kind, gpu.ErrOutOfMemory
// or gpu.ErrDeviceNotAvailable.
func (e *DriverError) Is(target error) bool {
	switch target {
	case gpu.ErrDevice, gpu.ErrCompute:
		return true
	case gpu.ErrOutOfMemory:
		return e.Kind() == gpu.DeviceOutOfMemory
	case gpu.ErrDeviceNotAvailable:
		return e.Kind() == gpu.DeviceUnavailable
	}
	return false
}

// Transient reports whether retrying may succeed (CUDA_ERROR_NOT_READY).
func (e *DriverError) Transient() bool { return e.Kind() == gpu.DeviceBusyTransient }

// DeviceError wraps e in a *gpu.DeviceError of e's Kind for device ordinal.
func (e *DriverError) DeviceError(ordinal int) *gpu.DeviceError {
	return &gpu.DeviceError{Kind: e.Kind(), Backend: BackendName, Device: ordinal, Err: e}
}

// BackendName is the backend name reported in *gpu.DeviceError.
const BackendName = "cuda"

// ErrNoNVRTC says that NVRTC (the CUDA run-time compiler) cannot be
// loaded; gpu/cuda re-exports it.
var ErrNoNVRTC = errors.New("cuda: NVRTC (the CUDA run-time compiler) not available")
