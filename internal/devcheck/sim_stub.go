//go:build !linux || !cgo

package devcheck

import (
	"errors"

	"github.com/ringactor/ringactor/gpu/cuda"
)

// errNoSim: the simulated device runs host-compiled kernels through cgo.
var errNoSim = errors.New("the simulated device needs a build with cgo on linux")

func simBackend(...cuda.BackendOption) (*cuda.Backend, error) { return nil, errNoSim }

func simRaised(*cuda.Backend) func(string) error { return func(string) error { return nil } }

func simHazardModel(*Env, *cuda.Backend) error { return errNoSim }
