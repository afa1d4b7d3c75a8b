package driverapi

import (
	"fmt"

	"github.com/ringactor/ringactor/gpu"
)

// ModuleLoadError is a PTX image the driver would not load
// (cuModuleLoadDataEx failed): the JIT's logs say why. It wraps the
// *DriverError and is errors.Is-equal to gpu.ErrCompilation and
// gpu.ErrCompute. gpu/cuda re-exports it.
type ModuleLoadError struct {
	Image string // what was loaded: "oneshot", "ring", or "ptx sha256:<hex>"
	Log   JITLog // the JIT's info and error logs
	Err   error  // the driver's error
}

// Error implements error, with the JIT error log when there is one.
func (e *ModuleLoadError) Error() string {
	s := fmt.Sprintf("cuda: loading module %s: %v", e.Image, e.Err)
	if e.Log.Error != "" {
		s += "\nJIT error log:\n" + e.Log.Error
	}
	return s
}

// Unwrap returns the driver's error.
func (e *ModuleLoadError) Unwrap() error { return e.Err }

// Is matches gpu.ErrCompilation and gpu.ErrCompute.
func (e *ModuleLoadError) Is(target error) bool {
	return target == gpu.ErrCompilation || target == gpu.ErrCompute
}

// Image kinds of a module image compiled by NVRTC (gpu/cuda re-exports
// them).
const (
	// ImageCUBIN is machine code (SASS) for one real architecture (sm_90),
	// an ELF image the driver loads without a JIT.
	ImageCUBIN = "cubin"
	// ImagePTX is PTX text for a virtual architecture (compute_90), which
	// the driver JIT-compiles for the device as it loads it.
	ImagePTX = "ptx"
)

// NVRTCTarget is what NVRTC compiles device code into for one device: the
// architecture option and the kind of image (gpu/cuda's NVRTCTarget).
type NVRTCTarget struct {
	// Arch is NVRTC's --gpu-architecture: "sm_90" for a CUBIN,
	// "compute_90" for PTX ("" for NVRTC's default).
	Arch string
	// Image is ImageCUBIN or ImagePTX.
	Image string
}
