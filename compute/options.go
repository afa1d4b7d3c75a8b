package compute

import (
	"log/slog"

	"go.opentelemetry.io/otel/trace"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/supervision"
	"github.com/ringactor/ringactor/telemetry"
)

// Option configures an Orchestrator (New).
type Option func(*config)

// config is an orchestrator's configuration. Defaults: accelerator auto,
// adaptive selection on, recovery on (supervision.DefaultRecovery),
// validation off, telemetry off, slog.Default.
type config struct {
	accelerator   gpu.Accelerator
	adaptive      bool
	minDeviceWork float64
	recovery      supervision.Recovery
	validation    Validation
	backends      []gpu.Backend
	pool          *gpu.Pool
	maxAlloc      int64
	logger        *slog.Logger
	ins           *telemetry.Instruments
	tracerProv    trace.TracerProvider
}

func defaultConfig() config {
	return config{accelerator: gpu.Auto, adaptive: true, minDeviceWork: gpu.DefaultMinDeviceWork, recovery: supervision.DefaultRecovery()}
}

// WithAccelerator sets the default accelerator: gpu.Auto (by workload),
// gpu.PreferCPU or gpu.PreferCUDA (a device when one is usable, the CPU
// otherwise). Default Auto.
func WithAccelerator(a gpu.Accelerator) Option { return func(c *config) { c.accelerator = a } }

// WithAdaptiveSelection turns adaptive backend selection (learning from
// measured timings which backend is faster per kernel and size) on or off.
// Default on.
func WithAdaptiveSelection(on bool) Option { return func(c *config) { c.adaptive = on } }

// WithMinDeviceWork sets the work (elements × kernel cost) below which
// automatic selection keeps a call on the CPU. Default gpu.DefaultMinDeviceWork.
func WithMinDeviceWork(w float64) Option { return func(c *config) { c.minDeviceWork = w } }

// WithRecovery sets the recovery policy of executions. Default
// supervision.DefaultRecovery(); pass supervision.Recovery{} to turn it off.
func WithRecovery(r supervision.Recovery) Option { return func(c *config) { c.recovery = r } }

// WithValidation turns on cross-backend validation (default off).
func WithValidation(v Validation) Option { return func(c *config) { c.validation = v } }

// WithBackends adds compute backends beyond the built-in CPU backend (and
// the CUDA backend where one is usable).
func WithBackends(b ...gpu.Backend) Option {
	return func(c *config) { c.backends = append(c.backends, b...) }
}

// WithPool sets the buffer pool executions draw their outputs from
// (default: a pool of the orchestrator's own).
func WithPool(p *gpu.Pool) Option { return func(c *config) { c.pool = p } }

// WithMaxAllocation sets the limit, in bytes, on the host storage of one
// buffer the orchestrator's own pool allocates (gpu.WithMaxAllocation): an
// execution whose output would exceed it fails with an error wrapping
// gpu.ErrOutOfMemory. Default (0): the process-wide gpu.MaxAllocation, half
// of physical memory unless gpu.SetMaxAllocation says otherwise. A pool
// given with WithPool keeps its own limit.
func WithMaxAllocation(n int64) Option { return func(c *config) { c.maxAlloc = n } }

// WithLogger sets the logger (default slog.Default()): unavailable
// backends, device failures moved to the CPU, validation mismatches.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithTelemetry records every execution in ins (its executions counter and
// duration histogram) and, when tracing is wanted, wraps it in a
// "ringactor.execute" span from ins's tracer. tp is the tracer provider ins
// was made with: nil for otel's global one (spans once a real provider is
// set with otel.SetTracerProvider), a no-op provider for none. Default: no
// telemetry (telemetry.Disabled).
func WithTelemetry(ins *telemetry.Instruments, tp trace.TracerProvider) Option {
	return func(c *config) { c.ins, c.tracerProv = ins, tp }
}
