//go:build linux && cgo

package bench

import (
	"encoding/json"
	"testing"

	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
	"github.com/ringactor/ringactor/internal/testutil/hangguard"
)

// TestRunDeviceBudgetSim runs the budget measures on the simulated
// device of an H200's profile: the budget places 4 programs of 256-thread
// blocks beside the default reserve (1,024 threads an SM left to them, 32
// registers a thread) and refuses the fifth; the saturation measures
// answer, and their JSON names are the contract.
func TestRunDeviceBudgetSim(t *testing.T) {
	open := func(opts ...cuda.BackendOption) (*cuda.Backend, error) {
		return simdevice.NewBackend(256<<20, append([]cuda.BackendOption{cuda.WithDeviceProfile(cuda.H200Profile())}, opts...)...), nil
	}
	cfg := BudgetConfig{Programs: 6, GridBlocks: 2, Saturated: 8, RTTSamples: 10, Epochs: 2}
	res, err := RunDeviceBudget(hangguard.Context(t), open, cfg, func(msg string, args ...any) { t.Log(append([]any{msg}, args...)...) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", *res)
	if res.ProgramsFit256 != 4 {
		t.Fatalf("%d programs of 256-thread blocks placed, want 4", res.ProgramsFit256)
	}
	if res.RTTQuietAlone <= 0 || res.RTTQuietAmongSaturated <= 0 || res.EpochMsSaturated <= 0 || res.SaturatedMailboxes != 8 {
		t.Fatalf("missing measurement: %+v", res)
	}
	raw, err := json.Marshal(&DeviceResult{BudgetResult: res})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"device_sim_programs_fit_256", "device_sim_rtt_p50_quiet_among_saturated_ns",
		"device_sim_rtt_p50_quiet_alone_ns", "device_sim_epoch_ms_saturated", "device_sim_register_ms_beside_rings"} {
		if _, ok := m[k]; !ok {
			t.Errorf("no %s in %s", k, raw)
		}
	}
}
