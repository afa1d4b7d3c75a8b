package devcheck

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/cuda/hostsim"
)

// hazardModelStep checks the simulated device's hazard model bites: a
// synchronising driver call beside a live ring fails in strict mode and
// waits (until a watchdog) in blocking mode. Only the simulator has the
// model; on a GPU the hazards step makes the real calls.
var hazardModelStep = Step{
	Name:    "hazard-model",
	Checks:  "(simulated device only) the hazard model fails a synchronising call beside a live ring (strict) and makes it wait (blocking)",
	Timeout: 30 * time.Second,
	run:     runHazardModel,
}

func runHazardModel(ctx context.Context, e *Env) error {
	if !e.Sim() {
		return Skipf("only the simulated device has a hazard model; on a GPU such a call hangs (the hazards step makes the real calls)")
	}
	b, err := e.Backend()
	if err != nil {
		return err
	}
	k, err := launchSaxpyRing(ctx, b, 16)
	if err != nil {
		return err
	}
	defer k.Close(ctx)
	hz := cuda.SimulatedHazards(b)
	var he *hostsim.HazardError
	e.Progress("strict mode: cuMemFree beside the ring")
	if err := hz.Call("cuMemFree_v2"); !errors.As(err, &he) || he.Kernel != "rc_ring_saxpy" {
		return fmt.Errorf("cuMemFree beside a ring in strict mode: %v, want a *hostsim.HazardError naming rc_ring_saxpy", err)
	}
	e.Progress("blocking mode: cuModuleUnload beside the ring waits for the watchdog")
	const watchdog = 50 * time.Millisecond
	hz.SetMode(hostsim.HazardBlocking, watchdog)
	err = hz.Call("cuModuleUnload")
	hz.SetMode(hostsim.HazardStrict, 0)
	if !errors.As(err, &he) || he.Waited < watchdog {
		return fmt.Errorf("cuModuleUnload beside a ring in blocking mode: %v, want a wait of at least %v", err, watchdog)
	}
	e.Set("raised", len(hz.Raised()))
	return nil
}
