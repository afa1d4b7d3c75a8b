//go:build !(linux && cgo)

package main

import (
	"errors"

	"github.com/ringactor/ringactor/gpu/cuda"
)

// simulatedDevices: the simulated device needs cgo on Linux.
func simulatedDevices(int) ([]closingBackend, error) {
	return nil, errors.New("--sim-devices: the simulated device needs a Linux build with cgo")
}

// simulatedBackend: the simulated device needs cgo on Linux.
func simulatedBackend() (closingBackend, error) {
	return nil, errors.New("--device=sim: the simulated device needs a Linux build with cgo")
}

// simulatedH200: the simulated device needs cgo on Linux.
func simulatedH200(...cuda.BackendOption) (*cuda.Backend, error) {
	return nil, errors.New("--device=sim: the simulated device needs a Linux build with cgo")
}
