//go:build linux && cgo

package devcheck

import (
	"errors"
	"fmt"
	"time"

	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/cuda/hostsim"
	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
)

// simBackend returns a simulated device.
func simBackend(opts ...cuda.BackendOption) (*cuda.Backend, error) {
	return simdevice.NewBackend(simMemBytes, opts...), nil
}

// simRaised returns a check that the simulated device's hazard model has
// raised nothing so far.
func simRaised(b *cuda.Backend) func(when string) error {
	hz := simdevice.Hazards(b)
	return func(when string) error {
		if r := hz.Raised(); len(r) > 0 {
			return fmt.Errorf("%s: the hazard model raised %d hazards, the first: %w", when, len(r), r[0])
		}
		return nil
	}
}

// simHazardModel checks, beside b's live SAXPY ring, that a synchronising
// call fails in strict mode and waits for the watchdog in blocking mode.
func simHazardModel(e *Env, b *cuda.Backend) error {
	hz := simdevice.Hazards(b)
	var he *hostsim.HazardError
	e.Progress("strict mode: cuMemFree beside the ring")
	if err := hz.Call("cuMemFree_v2"); !errors.As(err, &he) || he.Kernel != "rc_ring_saxpy" {
		return fmt.Errorf("cuMemFree beside a ring in strict mode: %v, want a *hostsim.HazardError naming rc_ring_saxpy", err)
	}
	e.Progress("blocking mode: cuModuleUnload beside the ring waits for the watchdog")
	const watchdog = 50 * time.Millisecond
	hz.SetMode(hostsim.HazardBlocking, watchdog)
	err := hz.Call("cuModuleUnload")
	hz.SetMode(hostsim.HazardStrict, 0)
	if !errors.As(err, &he) || he.Waited < watchdog {
		return fmt.Errorf("cuModuleUnload beside a ring in blocking mode: %v, want a wait of at least %v", err, watchdog)
	}
	e.Set("raised", len(hz.Raised()))
	return nil
}
