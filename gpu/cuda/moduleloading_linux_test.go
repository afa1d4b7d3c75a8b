//go:build linux && cgo

package cuda

import (
	"os"
	"testing"
)

// TestEagerModuleLoadingBeforeInit: the loader sets
// CUDA_MODULE_LOADING=EAGER before cuInit, overriding LAZY (the default
// since CUDA 12.2, under which a first launch or function lookup waits
// for the device).
func TestEagerModuleLoadingBeforeInit(t *testing.T) {
	l, _ := installedDriver(t)
	t.Setenv(ModuleLoadingEnv, "LAZY")
	_, _ = l.initialized() // cuInit fails without a device; the variable is set before it
	if v := os.Getenv(ModuleLoadingEnv); v != "EAGER" {
		t.Fatalf("%s = %q after init, want EAGER", ModuleLoadingEnv, v)
	}
}
