package bench

import (
	"context"

	"github.com/ringactor/ringactor/internal/devcheck"
)

// LaneConfig sizes the device lane measures (devcheck.LaneConfig).
type LaneConfig = devcheck.LaneConfig

// LaneResult is the device lane measures (devcheck.LaneResult).
type LaneResult = devcheck.LaneResult

// QuickLanes and FullLanes are the lane measures' configurations.
var (
	QuickLanes = devcheck.QuickLanes
	FullLanes  = devcheck.FullLanes
)

// RunDeviceLanes measures device lanes on a backend from open
// (devcheck.RunLanes): a chain joined by device lanes against the same
// chain relayed by the host, and a fan-in.
func RunDeviceLanes(ctx context.Context, open BackendFactory, cfg LaneConfig, log func(msg string, args ...any)) (*LaneResult, error) {
	b, err := open()
	if err != nil {
		return nil, err
	}
	defer b.Close()
	return devcheck.RunLanes(ctx, b, cfg, log)
}
