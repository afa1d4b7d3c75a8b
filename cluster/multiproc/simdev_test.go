//go:build linux && cgo

package multiproc

import (
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
)

// simDevices returns n simulated CUDA devices and a function closing them.
func simDevices(n int) ([]gpu.Backend, func()) {
	sims := simdevice.NewBackends(n, 64<<20)
	out := make([]gpu.Backend, len(sims))
	for i, b := range sims {
		out[i] = b
	}
	return out, func() {
		for _, b := range sims {
			_ = b.Close()
		}
	}
}

// simDevicesBuilt: members given simDevicesEnv have simulated devices.
const simDevicesBuilt = true
