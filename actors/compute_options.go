package actors

import (
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/supervision"
)

// computeConfig is the compute orchestrator's part of the runtime's
// configuration. Defaults: accelerator auto, adaptive selection on,
// recovery on (supervision.DefaultRecovery), validation off.
type computeConfig struct {
	accelerator   gpu.Accelerator
	adaptive      bool
	minDeviceWork float64
	recovery      supervision.Recovery
	validation    Validation
	backends      []gpu.Backend
	pool          *gpu.Pool
	maxAlloc      int64
}

func defaultComputeConfig() computeConfig {
	return computeConfig{accelerator: gpu.Auto, adaptive: true, minDeviceWork: gpu.DefaultMinDeviceWork, recovery: supervision.DefaultRecovery()}
}

// WithAccelerator sets the default accelerator: gpu.Auto (by workload),
// gpu.PreferCPU or gpu.PreferCUDA (a device when one is usable, the CPU
// otherwise). Default Auto.
func WithAccelerator(a gpu.Accelerator) Option {
	return func(c *runtimeConfig) { c.compute.accelerator = a }
}

// WithAdaptiveSelection turns adaptive backend selection (learning from
// measured timings which backend is faster per kernel and size) on or off.
// Default on.
func WithAdaptiveSelection(on bool) Option {
	return func(c *runtimeConfig) { c.compute.adaptive = on }
}

// WithMinDeviceWork sets the work (elements × kernel cost) below which
// automatic selection keeps a call on the CPU. Default gpu.DefaultMinDeviceWork.
func WithMinDeviceWork(w float64) Option {
	return func(c *runtimeConfig) { c.compute.minDeviceWork = w }
}

// WithRecovery sets the recovery policy of executions. Default
// supervision.DefaultRecovery(); pass supervision.Recovery{} to turn it off.
func WithRecovery(r supervision.Recovery) Option {
	return func(c *runtimeConfig) { c.compute.recovery = r }
}

// WithValidation turns on cross-backend validation (default off).
func WithValidation(v Validation) Option { return func(c *runtimeConfig) { c.compute.validation = v } }

// WithBackends adds compute backends beyond the built-in CPU backend (and
// the CUDA backend where one is usable).
func WithBackends(b ...gpu.Backend) Option {
	return func(c *runtimeConfig) { c.compute.backends = append(c.compute.backends, b...) }
}

// WithPool sets the buffer pool executions draw their outputs from (default:
// a pool of the runtime's own).
func WithPool(p *gpu.Pool) Option { return func(c *runtimeConfig) { c.compute.pool = p } }

// WithMaxAllocation sets the limit, in bytes, on the host storage of one
// buffer the runtime's own pool allocates (gpu.WithMaxAllocation): an
// execution whose output would exceed it fails with an error wrapping
// gpu.ErrOutOfMemory. Default (0): the process-wide gpu.MaxAllocation, half
// of physical memory unless gpu.SetMaxAllocation says otherwise. A pool
// given with WithPool keeps its own limit.
func WithMaxAllocation(n int64) Option {
	return func(c *runtimeConfig) { c.compute.maxAlloc = n }
}
