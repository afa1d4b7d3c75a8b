package cuda

import (
	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
)

// DeviceAPI is the part of the driver a [Backend] uses: memory, copies,
// modules, launches, streams, events and device attributes. *[Driver]
// implements it; so does a [HostDevice] — the simulated device of package
// gpu/cuda/simdevice, on which the backend's own code (allocation, argument
// packing, launch shapes, copies, ring programs) runs on machines without a
// GPU. Every method except DeviceGetAttribute needs the context current, so
// the backend calls it inside [Context.Do] (or, for a HostDevice, on the
// backend's own locked thread).
type DeviceAPI = driverapi.DeviceAPI

var _ DeviceAPI = (*Driver)(nil)

// runner runs functions on the thread that has the device's context
// current: a [Context] in production, a plain locked worker in tests.
type runner = devcore.Runner

var _ runner = (*Context)(nil)
