package cuda

import (
	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
)

// DefaultArenaBytes is the pinned memory reserved when the device opens
// (the arena of package gpu/cuda/internal/devcore): room for the staging
// of two full copy chunks, or for 64 rings of 64 slots of 4 KiB.
const DefaultArenaBytes = devcore.DefaultArenaBytes

// Device memory without synchronisation: the backend allocates Execute
// scratch and UnifiedBuffer device memory with the stream-ordered
// allocator (cuMemAllocFromPoolAsync / cuMemFreeAsync on its own stream,
// the default pool keeping all freed memory), and falls back to
// cuMemAlloc / cuMemFree, each in a device epoch when rings are live, on
// a driver or device without memory pools (devcore.Device.DevAlloc,
// gpu/cuda/internal/devcore/alloc.go).

// AsyncAllocAPI is the stream-ordered allocator of the driver. *[Driver]
// implements it; a [DeviceAPI] that implements it too (the simulated
// device) gets the backend's pool path instead of the fallback.
type AsyncAllocAPI = driverapi.AsyncAllocAPI

var _ AsyncAllocAPI = (*Driver)(nil)

// StreamOrderedAlloc reports whether the backend allocates device memory
// with the stream-ordered allocator (false: the fallback, see
// devcore.Device.DevAlloc; or no device).
func (b *Backend) StreamOrderedAlloc() bool {
	d, err := b.device()
	if err != nil {
		return false
	}
	var ok bool
	_ = d.Do(func() error { ok = d.StreamOrderedAlloc(); return nil })
	return ok
}
