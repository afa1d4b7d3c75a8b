package cuda

import (
	"errors"
	"fmt"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
)

// ModuleLoadError is a PTX image the driver would not load
// (cuModuleLoadDataEx failed): the JIT's logs say why. It wraps the
// *DriverError and is errors.Is-equal to gpu.ErrCompilation and
// gpu.ErrCompute.
type ModuleLoadError = driverapi.ModuleLoadError

// ErrKernelExecTimeout is the class of [WatchdogError].
var ErrKernelExecTimeout = errors.New("cuda: device has a kernel execution timeout")

// WatchdogError refuses a persistent ring kernel on a device whose
// CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT is 1: a display GPU's watchdog
// kills any kernel that runs for more than a few seconds, and a ring
// kernel never returns until it is terminated. One-shot kernels still run
// on such a device. It is errors.Is-equal to ErrKernelExecTimeout,
// gpu.ErrDevice and gpu.ErrDeviceNotAvailable (so ring kernels fall back
// to the CPU backend).
type WatchdogError struct {
	Device int // the device ordinal
}

// Error implements error.
func (e *WatchdogError) Error() string {
	return fmt.Sprintf("cuda: device %d has a kernel execution timeout (CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT = 1, "+
		"a display watchdog): it would kill a persistent ring kernel, so ring kernels are refused on it "+
		"(one-shot kernels still run); use a GPU that drives no display, or the CPU backend", e.Device)
}

// Is matches ErrKernelExecTimeout, gpu.ErrDevice and gpu.ErrDeviceNotAvailable.
func (e *WatchdogError) Is(target error) bool {
	return target == ErrKernelExecTimeout || target == gpu.ErrDevice || target == gpu.ErrDeviceNotAvailable
}

// deviceErr turns an error of a driver call into the backend's
// classification (devcore.DeviceErr).
func deviceErr(ordinal int, err error) error { return devcore.DeviceErr(ordinal, err) }
