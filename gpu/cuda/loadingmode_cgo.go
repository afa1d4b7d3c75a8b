//go:build linux && cgo

package cuda

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include "driver_cgo.h"

// rc_module_loading_mode calls cuModuleGetLoadingMode (CUDA 12.0+): -1
// when the driver has no such entry point, else its CUresult, the mode in
// *mode (1 eager, 2 lazy).
static int rc_module_loading_mode(rc_cuda_api *a, int *mode) {
	CUresult (*get)(int *) = (CUresult (*)(int *))dlsym(a->handle, "cuModuleGetLoadingMode");
	if (get == NULL) {
		return -1;
	}
	return (int)get(mode);
}
*/
import "C"

// ModuleGetLoadingMode reads back the driver's module loading mode
// (cuModuleGetLoadingMode, CUDA 12.0+): "EAGER" or "LAZY". The driver must
// be initialised. A driver without the entry point returns
// [ErrNoLoadingMode].
func (d *Driver) ModuleGetLoadingMode() (string, error) {
	var mode C.int
	r := C.rc_module_loading_mode(d.api, &mode)
	if r == -1 {
		return "", ErrNoLoadingMode
	}
	if err := d.check("cuModuleGetLoadingMode", C.CUresult(r)); err != nil {
		return "", err
	}
	return loadingModeName(int(mode)), nil
}
