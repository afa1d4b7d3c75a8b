package ringrt

import (
	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
)

// What a persistent launch (a ring kernel's loop, a program's grid of
// mailboxes) asks of the device beside one-shot kernels: its stream's
// priority and its function's shared-memory carveout (docs/device.md,
// "Priorities and shared memory beside persistent kernels").

// persistentStream creates the stream of a persistent launch (inside Do):
// at the device's least stream priority, below the one-shot stream's
// greatest (devcore.StreamPriorities), so that wherever an SM has room
// the block scheduler starts pending one-shot blocks before the blocks of
// a persistent grid launched or relaunched (after a device epoch) at the
// same time.
func persistentStream(d *devcore.Device) (driverapi.Stream, error) {
	return d.NewStream(d.Priorities.Least)
}

// persistentCarveout sets fn, a persistent entry just resolved, to prefer
// the most shared memory of the SM's unified L1/shared memory
// (FuncAttrPreferredSharedMemoryCarveout = SharedmemCarveoutMaxShared;
// inside Do). An SM runs all its resident blocks under one split, and one
// holding a persistent block keeps it for good: were the split chosen for
// the persistent kernel's little shared memory (more L1), a one-shot
// kernel needing ~100 KiB of shared memory would find no room on any SM
// holding a persistent block. It is a hint: a driver without it, or one
// that refuses it, leaves the default, so a failure is ignored.
func persistentCarveout(d *devcore.Device, fn driverapi.Function) {
	if fa, ok := d.API.(driverapi.FuncAttributeAPI); ok && !fn.IsNil() {
		_ = fa.FuncSetAttribute(fn, driverapi.FuncAttrPreferredSharedMemoryCarveout, driverapi.SharedmemCarveoutMaxShared)
	}
}
