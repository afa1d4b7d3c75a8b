//go:build !(linux && cgo)

package main

import "errors"

// simulatedDevices: the simulated device needs cgo on Linux.
func simulatedDevices(int) ([]closingBackend, error) {
	return nil, errors.New("--sim-devices: the simulated device needs a Linux build with cgo")
}

// simulatedBackend: the simulated device needs cgo on Linux.
func simulatedBackend() (closingBackend, error) {
	return nil, errors.New("--device=sim: the simulated device needs a Linux build with cgo")
}
