//go:build linux && cgo

package bench

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
	"github.com/ringactor/ringactor/internal/testutil/hangguard"
)

// TestRunDeviceLanesSim runs the lane measures on the simulated device
// (small sizes; RINGACTOR_BENCH_LANES=quick runs QuickLanes): every
// measure answers, the fan-in's messages all arrive once and in order per
// upstream, and the JSON names are the contract.
func TestRunDeviceLanesSim(t *testing.T) {
	open := func(opts ...cuda.BackendOption) (*cuda.Backend, error) {
		return simdevice.NewBackend(256<<20, append([]cuda.BackendOption{cuda.WithDeviceProfile(cuda.H200Profile())}, opts...)...), nil
	}
	cfg := LaneConfig{Chain: 4, RTTSamples: 20, ChainMsgs: 200, InFlight: 8, FanIn: 8, FanInMsgs: 100}
	if os.Getenv("RINGACTOR_BENCH_LANES") == "quick" {
		cfg = QuickLanes
	}
	res, err := RunDeviceLanes(hangguard.Context(t), open, cfg, func(msg string, args ...any) { t.Log(append([]any{msg}, args...)...) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", *res)
	if res.LaneHopP50 <= 0 || res.HostRelayHopP50 <= 0 || res.LaneChainRate <= 0 || res.HostRelayChainRate <= 0 {
		t.Fatalf("missing measurement: %+v", res)
	}
	if res.FanInMessages != cfg.FanIn*cfg.FanInMsgs || res.FanInOutOfOrderOrMissing != 0 {
		t.Fatalf("fan-in: %d messages, %d out of order or wrong", res.FanInMessages, res.FanInOutOfOrderOrMissing)
	}
	raw, err := json.Marshal(&DeviceResult{LaneResult: res})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"device_sim_lane_hop_ns", "device_sim_host_relay_hop_ns", "device_sim_lane_chain_msgs_per_s",
		"device_sim_host_relay_chain_msgs_per_s", "device_sim_lane_fanin_msgs_per_s"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON has no %s", k)
		}
	}
}
