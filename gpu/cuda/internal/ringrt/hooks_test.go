package ringrt

import (
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
)

// The hooks this package's tests reach gpu/cuda and the simulated device
// through (hook_test.go and sim_hook_test.go, of package ringrt_test, set
// them): this package's own tests cannot import either, which import it.

// NewSimDeviceForTest is simdevice.NewDevice (set by sim_hook_test.go).
var NewSimDeviceForTest func(mem uint64) driverapi.DeviceAPI

// CompileForTest is gpu/cuda's NVRTC compilation of a ring program, with
// its RingProgramOptions (set by sim_hook_test.go).
var CompileForTest Compiler
