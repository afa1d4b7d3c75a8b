package devcheck

import (
	"context"
	"time"
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
	return simHazardModel(e, b)
}
