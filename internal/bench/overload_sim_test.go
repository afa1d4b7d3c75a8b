//go:build !race && linux && cgo

package bench

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
	"github.com/ringactor/ringactor/internal/testutil/hangguard"
)

// TestOverloadDeviceKind is TestOverloadCPUKind for a device kind on the
// simulated device: its handler's cost is a loop of DeviceIters steps.
func TestOverloadDeviceKind(t *testing.T) {
	defer goleak.VerifyNone(t, append(protoActorLeaks, goleak.IgnoreCurrent())...)
	sim := simdevice.NewBackend(64 << 20)
	defer sim.Close()
	cfg := tinyOverload(OverloadDevice)
	cfg.Backend = sim
	r, err := RunOverload(hangguard.Context(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkOverload(t, r)
}
