//go:build linux && cgo

package main

import (
	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
)

// simulatedDevices are serve's --sim-devices.
func simulatedDevices(n int) ([]closingBackend, error) {
	var out []closingBackend
	for _, b := range simdevice.NewBackends(n, 256<<20) {
		out = append(out, b)
	}
	return out, nil
}

// simulatedBackend is the simulated CUDA device of --device=sim.
func simulatedBackend() (closingBackend, error) { return simdevice.NewBackend(256 << 20), nil }

// simulatedH200 is a simulated CUDA device of an H200's profile with opts
// (the device budget's bench measures).
func simulatedH200(opts ...cuda.BackendOption) (*cuda.Backend, error) {
	return simdevice.NewBackend(256<<20, append([]cuda.BackendOption{cuda.WithDeviceProfile(cuda.H200Profile())}, opts...)...), nil
}
