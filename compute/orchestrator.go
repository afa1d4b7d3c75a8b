package compute

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/trace"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cpu"
	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/telemetry"
)

// Orchestrator runs compute kernels: it holds the kernel registry (the
// built-in kernels and those registered at run time), the backends and the
// selection among them, the buffer pool outputs come from, the profiles,
// cross-backend validation and the recovery policy. Execute and friends
// read it without locks; an Orchestrator is safe for concurrent use.
//
// actors.Runtime holds one (Runtime.Compute) and forwards its compute
// methods to it; a program that runs no ring kernels can use one alone.
type Orchestrator struct {
	cfg      config
	logger   *slog.Logger
	ins      *telemetry.Instruments
	tracer   trace.Tracer
	tracing  bool // telemetry given: spans around executions (executionSpans)
	ownTP    bool // a tracer provider was given with the instruments
	spans    bool // that provider makes spans
	registry *gpu.Registry
	selector *gpu.Selector
	devices  *devices // the device backends and their executions in flight
	pool     *gpu.Pool
	profiler profiler
	closed   atomic.Bool

	backendsReported sync.Once
	// ownBackends are the backends the orchestrator made (CPU, CUDA);
	// Close closes those that need it (the CUDA context's thread).
	// Backends given with WithBackends belong to the caller.
	ownBackends []gpu.Backend
}

// Backends is what device ring kernels need of the compute orchestrator:
// its backends, the CPU first, among them the CUDA backends whose devices
// run ring programs. *Orchestrator implements it.
type Backends interface {
	Backends() []gpu.Backend
}

var _ Backends = (*Orchestrator)(nil)

// New makes an orchestrator: the registry with the built-in kernels, the
// CPU backend, a CUDA backend (its driver probed on first use, not here),
// the backends given with WithBackends, the selector and the pool.
func New(opts ...Option) (*Orchestrator, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	orc := &Orchestrator{cfg: cfg, logger: cfg.logger, ins: cfg.ins}
	if orc.logger == nil {
		orc.logger = slog.Default()
	}
	if orc.ins == nil {
		orc.ins = telemetry.Disabled()
	} else {
		orc.tracing = true
		orc.ownTP = cfg.tracerProv != nil
		orc.spans = telemetry.MakesSpans(cfg.tracerProv)
	}
	orc.tracer = orc.ins.Tracer()
	orc.registry = gpu.NewRegistry()
	if err := orc.registry.Register(cpu.BuiltinKernels()...); err != nil {
		return nil, err
	}
	// The CUDA backend probes the driver on first use (an Execute, or
	// Backends()[i].Available()), not here: a program that only runs ring
	// kernels on the CPU never pays for loading libcuda.
	orc.ownBackends = []gpu.Backend{cpu.NewBackend(), cuda.NewBackend()}
	backends := append(slices.Clone(orc.ownBackends), cfg.backends...)
	orc.selector = gpu.NewSelector(backends, gpu.SelectionPolicy{
		Accelerator: cfg.accelerator, Adaptive: cfg.adaptive, MinDeviceWork: cfg.minDeviceWork,
	})
	orc.devices = newDevices(backends)
	orc.pool = cfg.pool
	if orc.pool == nil {
		orc.pool = gpu.NewPool(gpu.WithMaxAllocation(cfg.maxAlloc))
	}
	return orc, nil
}

// RegisterKernel adds compute kernels to the registry at run time; a
// malformed spec or a taken name is a *gpu.RegistrationError and registers
// nothing. Registrations are serialised; lookups by Execute are lock-free.
func (orc *Orchestrator) RegisterKernel(ctx context.Context, specs ...*gpu.KernelSpec) error {
	if orc.closed.Load() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return orc.registry.Register(specs...)
}

// reportBackends logs, once, every backend that cannot run kernels and why
// (no driver, no device, …): the orchestrator then computes without it.
func (orc *Orchestrator) reportBackends() {
	orc.backendsReported.Do(func() {
		for _, b := range orc.selector.Backends() {
			if err := b.Available(); err != nil {
				orc.logger.Info("ringactor: backend unavailable, computing without it", "backend", b.Name(), "error", err)
			}
		}
	})
}

// Kernels lists the registered compute kernels, sorted by name.
func (orc *Orchestrator) Kernels() []*gpu.KernelSpec { return orc.registry.Specs() }

// Backends lists the compute backends, the CPU first.
func (orc *Orchestrator) Backends() []gpu.Backend { return orc.selector.Backends() }

// Pool returns the buffer pool executions draw their outputs from.
func (orc *Orchestrator) Pool() *gpu.Pool { return orc.pool }

// Close refuses further calls (ErrClosed) and closes the backends the
// orchestrator made; backends given with WithBackends belong to the
// caller. Calls under way finish. A second Close returns nil.
func (orc *Orchestrator) Close() error {
	if orc.closed.Swap(true) {
		return nil
	}
	var errs []error
	for _, b := range orc.ownBackends {
		if c, ok := b.(interface{ Close() error }); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("closing backend %s: %w", b.Name(), err))
			}
		}
	}
	return errors.Join(errs...)
}
