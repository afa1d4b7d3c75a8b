package devcore

import (
	"errors"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
)

// Unavailable builds the DeviceUnavailable error of the CUDA backend.
func Unavailable(reason string) error {
	return &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: driverapi.BackendName, Reason: reason}
}

// DeviceErr turns an error of a driver call into the backend's
// classification: a *DriverError becomes a *gpu.DeviceError of its kind
// for device ordinal (out of memory, unavailable, failed…); anything else
// is returned unchanged.
func DeviceErr(ordinal int, err error) error {
	if err == nil {
		return nil
	}
	var de *driverapi.DriverError
	if !errors.As(err, &de) {
		return err
	}
	var ge *gpu.DeviceError
	if errors.As(err, &ge) || errors.Is(err, gpu.ErrCompilation) || errors.Is(err, gpu.ErrArgument) || errors.Is(err, gpu.ErrMemory) {
		return err // already classified
	}
	return &gpu.DeviceError{Kind: de.Kind(), Backend: driverapi.BackendName, Device: ordinal, Err: err}
}
