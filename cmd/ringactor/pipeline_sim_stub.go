//go:build !(linux && cgo)

package main

import "errors"

// simulatedBackend: the simulated device needs cgo on Linux.
func simulatedBackend() (closingBackend, error) {
	return nil, errors.New("--device=sim: the simulated device needs a Linux build with cgo")
}
