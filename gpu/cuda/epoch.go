package cuda

import (
	"context"
	"time"

	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
	"github.com/ringactor/ringactor/gpu/cuda/internal/ringrt"
)

// The device epoch: the few driver calls that synchronise the device and
// cannot be avoided (loading a module while rings run, growing the pinned
// arena, the fallback allocator, unloading and closing) are made with the
// rings parked and relaunched after, losing no message
// (gpu/cuda/internal/devcore's Epochs; the rings' side in
// gpu/cuda/internal/ringrt's epoch.go).

// ErrEpochTimeout is wrapped by the error of a device epoch when a ring
// kernel did not acknowledge its park in time (a handler that does not
// return, or a device that stopped). The synchronising call is then not
// made and the rings already parked are relaunched.
var ErrEpochTimeout = devcore.ErrEpochTimeout

// DefaultEpochSpacing is the least time the rings run between two device
// epochs unless WithEpochSpacing says otherwise.
const DefaultEpochSpacing = time.Millisecond

// DefaultParkTimeout bounds how long an epoch waits for the rings' acks.
const DefaultParkTimeout = devcore.DefaultParkTimeout

// EpochStats says what the device epochs of a backend cost.
type EpochStats = ringrt.EpochStats

// DeviceEpoch runs an empty device epoch: it parks every live ring kernel
// of the backend and relaunches it, and returns how long the rings were
// parked (0 without live rings). It is what every unavoidable
// synchronising call costs the rings; the H100 runbook in README.md
// measures it with this. Concurrent calls share one epoch (the one that
// parks next serves every call made before it), and an epoch waits for
// the spacing since the previous one (WithEpochSpacing) and for each
// ring's backlog first; ctx bounds those waits and the park.
func (b *Backend) DeviceEpoch(ctx context.Context) (time.Duration, error) {
	d, err := b.device()
	if err != nil {
		return 0, err
	}
	return d.rt.Epoch(ctx)
}

// EpochStats returns what the backend's device epochs cost so far.
func (b *Backend) EpochStats() EpochStats {
	d, err := b.device()
	if err != nil || d == nil {
		return EpochStats{}
	}
	return d.rt.EpochStats()
}
