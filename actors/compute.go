package actors

import (
	"context"
	"slices"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cpu"
	"github.com/ringactor/ringactor/gpu/cuda"
)

// initCompute sets up the compute orchestrator: the kernel registry with
// the built-in kernels, the backends, the selector and the buffer pool.
func (rt *Runtime) initCompute(cfg computeConfig) error {
	rt.compute = cfg
	rt.registry = gpu.NewRegistry()
	if err := rt.registry.Register(cpu.BuiltinKernels()...); err != nil {
		return err
	}
	// The CUDA backend probes the driver on first use (an Execute, or
	// Backends()[i].Available()), not here: a runtime that only runs ring
	// kernels on the CPU never pays for loading libcuda.
	rt.ownBackends = []gpu.Backend{cpu.NewBackend(), cuda.NewBackend()}
	backends := append(slices.Clone(rt.ownBackends), cfg.backends...)
	rt.selector = gpu.NewSelector(backends, gpu.SelectionPolicy{
		Accelerator: cfg.accelerator, Adaptive: cfg.adaptive, MinDeviceWork: cfg.minDeviceWork,
	})
	rt.pool = cfg.pool
	if rt.pool == nil {
		rt.pool = gpu.NewPool(gpu.WithMaxAllocation(cfg.maxAlloc))
	}
	rt.tracer = rt.telemetry.Tracer()
	return nil
}

// registerKernels asks the orchestrator to add compute kernels.
type registerKernels struct {
	specs []*gpu.KernelSpec
	done  chan error
}

// RegisterKernel adds compute kernels to the orchestrator's registry at run
// time; a malformed spec or a taken name is a *gpu.RegistrationError and
// registers nothing. Registration goes through the orchestrator actor, which
// owns the registry; lookups by Execute are lock-free.
func (rt *Runtime) RegisterKernel(ctx context.Context, specs ...*gpu.KernelSpec) error {
	if rt.closed.Load() {
		return ErrRuntimeClosed
	}
	done := make(chan error, 1)
	rt.system.Root.Send(rt.orch.pid, &registerKernels{specs: specs, done: done})
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// reportBackends logs, once, every backend that cannot run kernels and why
// (no driver, no device, …): the orchestrator then computes without it.
func (rt *Runtime) reportBackends() {
	rt.backendsReported.Do(func() {
		for _, b := range rt.selector.Backends() {
			if err := b.Available(); err != nil {
				rt.logger.Info("ringactor: backend unavailable, computing without it", "backend", b.Name(), "error", err)
			}
		}
	})
}

// ComputeKernels lists the registered compute kernels, sorted by name.
func (rt *Runtime) ComputeKernels() []*gpu.KernelSpec { return rt.registry.Specs() }

// Backends lists the compute backends, the CPU first.
func (rt *Runtime) Backends() []gpu.Backend { return rt.selector.Backends() }

// Pool returns the buffer pool executions draw their outputs from.
func (rt *Runtime) Pool() *gpu.Pool { return rt.pool }
