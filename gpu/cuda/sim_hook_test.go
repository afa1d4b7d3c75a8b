//go:build linux && cgo

package cuda_test

import (
	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
)

// The simulated device for this package's internal tests
// (sim_helpers_test.go), which cannot import simdevice themselves: this
// file's package can, and the test binary holds both.
func init() {
	cuda.NewSimDeviceForTest = func(mem uint64) cuda.HostDevice { return simdevice.NewDevice(mem) }
	cuda.NewSimBackendForTest = func(d cuda.HostDevice, opts ...cuda.BackendOption) *cuda.Backend {
		return simdevice.NewBackendOn(d.(*simdevice.Device), opts...)
	}
}
