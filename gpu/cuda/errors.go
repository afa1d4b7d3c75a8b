package cuda

import (
	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
)

// Result is a CUresult, the status code of every driver call.
type Result = driverapi.Result

// Driver status codes this package distinguishes (values of cuda.h). The
// test suite checks each name against the installed driver's
// cuGetErrorName.
const (
	Success                    Result = driverapi.Success                    // CUDA_SUCCESS
	ErrInvalidValue            Result = driverapi.ErrInvalidValue            // CUDA_ERROR_INVALID_VALUE
	ErrOutOfMemory             Result = driverapi.ErrOutOfMemory             // CUDA_ERROR_OUT_OF_MEMORY
	ErrNotInitialized          Result = driverapi.ErrNotInitialized          // CUDA_ERROR_NOT_INITIALIZED
	ErrDeinitialized           Result = driverapi.ErrDeinitialized           // CUDA_ERROR_DEINITIALIZED
	ErrStubLibrary             Result = driverapi.ErrStubLibrary             // CUDA_ERROR_STUB_LIBRARY
	ErrDeviceUnavailable       Result = driverapi.ErrDeviceUnavailable       // CUDA_ERROR_DEVICE_UNAVAILABLE
	ErrNoDevice                Result = driverapi.ErrNoDevice                // CUDA_ERROR_NO_DEVICE
	ErrInvalidDevice           Result = driverapi.ErrInvalidDevice           // CUDA_ERROR_INVALID_DEVICE
	ErrInvalidImage            Result = driverapi.ErrInvalidImage            // CUDA_ERROR_INVALID_IMAGE
	ErrInvalidContext          Result = driverapi.ErrInvalidContext          // CUDA_ERROR_INVALID_CONTEXT
	ErrNoBinaryForGPU          Result = driverapi.ErrNoBinaryForGPU          // CUDA_ERROR_NO_BINARY_FOR_GPU
	ErrInvalidPTX              Result = driverapi.ErrInvalidPTX              // CUDA_ERROR_INVALID_PTX
	ErrJITCompilerNotFound     Result = driverapi.ErrJITCompilerNotFound     // CUDA_ERROR_JIT_COMPILER_NOT_FOUND
	ErrUnsupportedPTXVersion   Result = driverapi.ErrUnsupportedPTXVersion   // CUDA_ERROR_UNSUPPORTED_PTX_VERSION
	ErrInvalidHandle           Result = driverapi.ErrInvalidHandle           // CUDA_ERROR_INVALID_HANDLE
	ErrNotFound                Result = driverapi.ErrNotFound                // CUDA_ERROR_NOT_FOUND
	ErrNotReady                Result = driverapi.ErrNotReady                // CUDA_ERROR_NOT_READY
	ErrIllegalAddress          Result = driverapi.ErrIllegalAddress          // CUDA_ERROR_ILLEGAL_ADDRESS
	ErrLaunchOutOfResources    Result = driverapi.ErrLaunchOutOfResources    // CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
	ErrLaunchTimeout           Result = driverapi.ErrLaunchTimeout           // CUDA_ERROR_LAUNCH_TIMEOUT
	ErrAssert                  Result = driverapi.ErrAssert                  // CUDA_ERROR_ASSERT
	ErrIllegalInstruction      Result = driverapi.ErrIllegalInstruction      // CUDA_ERROR_ILLEGAL_INSTRUCTION
	ErrLaunchFailed            Result = driverapi.ErrLaunchFailed            // CUDA_ERROR_LAUNCH_FAILED
	ErrNotPermitted            Result = driverapi.ErrNotPermitted            // CUDA_ERROR_NOT_PERMITTED
	ErrNotSupported            Result = driverapi.ErrNotSupported            // CUDA_ERROR_NOT_SUPPORTED
	ErrSystemNotReady          Result = driverapi.ErrSystemNotReady          // CUDA_ERROR_SYSTEM_NOT_READY
	ErrSystemDriverMismatch    Result = driverapi.ErrSystemDriverMismatch    // CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
	ErrCompatNotSupportedOnDev Result = driverapi.ErrCompatNotSupportedOnDev // CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE
	ErrUnknown                 Result = driverapi.ErrUnknown                 // CUDA_ERROR_UNKNOWN
)

// DriverError is a driver call that returned a status other than
// CUDA_SUCCESS. Name and Message come from cuGetErrorName and
// cuGetErrorString; they are empty for a code the driver does not know.
//
// A DriverError is errors.Is-equal to gpu.ErrDevice and gpu.ErrCompute, and
// by its Kind to gpu.ErrOutOfMemory or gpu.ErrDeviceNotAvailable.
type DriverError = driverapi.DriverError

// BackendName is the backend name reported in *gpu.DeviceError.
const BackendName = driverapi.BackendName

// ErrContextClosed is returned by [Context.Do] after [Context.Close].
var ErrContextClosed = devcore.ErrContextClosed

// unavailable builds the DeviceUnavailable error of this backend.
func unavailable(reason string) error { return devcore.Unavailable(reason) }
