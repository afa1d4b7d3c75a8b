//go:build linux && cgo

package main

import (
	"github.com/ringactor/ringactor/gpu/cuda"
)

// simulatedBackend is the simulated CUDA device of --device=sim.
func simulatedBackend() (closingBackend, error) { return cuda.NewSimulatedBackend(256 << 20), nil }
