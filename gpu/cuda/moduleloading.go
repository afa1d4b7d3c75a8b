package cuda

import (
	"log/slog"
	"os"
)

// ModuleLoadingEnv is the driver's CUDA_MODULE_LOADING variable. Since
// CUDA 12.2 its default is LAZY: a kernel's code is loaded on its first
// launch or function lookup, and that load waits for the device while
// holding the context lock, which beside a persistent ring kernel that
// never returns waits forever. The loader therefore sets it to EAGER
// before cuInit, so every module is loaded whole by cuModuleLoadDataEx,
// which the backend makes before any ring launches or inside a device
// epoch.
const ModuleLoadingEnv = "CUDA_MODULE_LOADING"

// forceEagerLoading sets CUDA_MODULE_LOADING=EAGER for the driver (cgo's
// os.Setenv also sets the C environment the driver reads). Another value
// set by the user is overridden, with a warning.
func forceEagerLoading() {
	v, set := os.LookupEnv(ModuleLoadingEnv)
	if v == "EAGER" {
		return
	}
	if set {
		slog.Warn("ringactor/cuda: overriding "+ModuleLoadingEnv+": ring kernels need eager module loading",
			"was", v, "now", "EAGER")
	}
	if err := os.Setenv(ModuleLoadingEnv, "EAGER"); err != nil {
		slog.Warn("ringactor/cuda: cannot set "+ModuleLoadingEnv, "err", err)
	}
}
