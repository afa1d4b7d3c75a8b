//go:build linux && cgo

package ringrt_test

import (
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
	"github.com/ringactor/ringactor/gpu/cuda/internal/ringrt"
	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
)

// The simulated device for this package's internal tests
// (sim_helpers_test.go), which cannot import simdevice themselves: this
// file's package can, and the test binary holds both.
func init() {
	ringrt.NewSimDeviceForTest = func(mem uint64) driverapi.DeviceAPI { return simdevice.NewDevice(mem) }
}
