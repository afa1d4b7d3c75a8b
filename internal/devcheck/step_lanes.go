package devcheck

import (
	"context"
	"fmt"
	"time"
)

// lanesStep runs a chain of device ring kernels joined by device lanes
// against the same chain relayed by the host, and a fan-in of 8 into 1.
var lanesStep = Step{
	Name: "lanes",
	Checks: "a 4-kernel chain joined by device lanes answers every message in order (hop p50 against the same chain relayed by the host); " +
		"a fan-in of 8 upstreams into one downstream delivers every message once, in order per upstream",
	Timeout: 3 * time.Minute,
	run:     runLanes,
}

func runLanes(ctx context.Context, e *Env) error {
	b, err := e.Backend(scaleOptions(e)...)
	if err != nil {
		return err
	}
	cfg := FullLanes
	if e.Quick() {
		cfg = LaneConfig{Chain: 4, RTTSamples: 100, ChainMsgs: 1_000, InFlight: 8, FanIn: 8, FanInMsgs: 1_000}
	}
	res, err := RunLanes(ctx, b, cfg, func(msg string, args ...any) { e.Progress("%s %v", msg, args) })
	if err != nil {
		return err
	}
	e.Set("lane_hop_p50_ns", res.LaneHopP50)
	e.Set("host_relay_hop_p50_ns", res.HostRelayHopP50)
	e.Set("lane_chain_per_s", res.LaneChainRate)
	e.Set("host_relay_chain_per_s", res.HostRelayChainRate)
	e.Set("fanin_per_s", res.FanInRate)
	e.Set("fanin_messages", res.FanInMessages)
	if want := cfg.FanIn * cfg.FanInMsgs; res.FanInMessages != want || res.FanInOutOfOrderOrMissing != 0 {
		return fmt.Errorf("fan-in: %d of %d messages, %d lost, repeated or out of order", res.FanInMessages, want, res.FanInOutOfOrderOrMissing)
	}
	return nil
}
