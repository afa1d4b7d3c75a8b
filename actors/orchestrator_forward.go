package actors

import (
	"context"

	"github.com/ringactor/ringactor/compute"
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/supervision"
)

// The runtime's compute orchestrator (package compute) and the names of
// its API a ring-kernel program uses through the runtime: rt.Execute(ctx,
// "add", in, nil, actors.WithScalars(2)) reads as it always did. These are
// forwards, not deprecated names.

// Compute returns the runtime's compute orchestrator.
func (rt *Runtime) Compute() *compute.Orchestrator { return rt.compute }

// Execute runs a compute kernel once (compute.Orchestrator.Execute).
func (rt *Runtime) Execute(ctx context.Context, kernel string, inputs []*gpu.UnifiedBuffer, outShape gpu.Shape, opts ...ExecOption) (*gpu.UnifiedBuffer, error) {
	return rt.compute.Execute(ctx, kernel, inputs, outShape, opts...)
}

// ExecuteBatch runs a kernel on several independent items in one backend
// call (compute.Orchestrator.ExecuteBatch).
func (rt *Runtime) ExecuteBatch(ctx context.Context, kernel string, items [][]*gpu.UnifiedBuffer, opts ...ExecOption) ([]*gpu.UnifiedBuffer, error) {
	return rt.compute.ExecuteBatch(ctx, kernel, items, opts...)
}

// Map runs an elementwise kernel in chunks across the cores
// (compute.Orchestrator.Map).
func (rt *Runtime) Map(ctx context.Context, kernel string, inputs []*gpu.UnifiedBuffer, chunk int, opts ...ExecOption) (*gpu.UnifiedBuffer, error) {
	return rt.compute.Map(ctx, kernel, inputs, chunk, opts...)
}

// Reduce runs a reduction kernel and returns its scalar result as T
// (compute.Reduce).
func Reduce[T gpu.Number](ctx context.Context, rt *Runtime, kernel string, input *gpu.UnifiedBuffer, opts ...ExecOption) (T, error) {
	return compute.Reduce[T](ctx, rt.compute, kernel, input, opts...)
}

// Submit starts an execution in the background (compute.Orchestrator.Submit).
func (rt *Runtime) Submit(ctx context.Context, kernel string, inputs []*gpu.UnifiedBuffer, outShape gpu.Shape, opts ...ExecOption) *Job {
	return rt.compute.Submit(ctx, kernel, inputs, outShape, opts...)
}

// NewPipeline starts an empty pipeline of compute kernels
// (compute.Orchestrator.NewPipeline).
func (rt *Runtime) NewPipeline() *Pipeline { return rt.compute.NewPipeline() }

// RegisterKernel adds compute kernels at run time
// (compute.Orchestrator.RegisterKernel).
func (rt *Runtime) RegisterKernel(ctx context.Context, specs ...*gpu.KernelSpec) error {
	return rt.compute.RegisterKernel(ctx, specs...)
}

// ComputeKernels lists the registered compute kernels, sorted by name
// (compute.Orchestrator.Kernels).
func (rt *Runtime) ComputeKernels() []*gpu.KernelSpec { return rt.compute.Kernels() }

// Backends lists the compute backends, the CPU first.
func (rt *Runtime) Backends() []gpu.Backend { return rt.compute.Backends() }

// Pool returns the buffer pool executions draw their outputs from.
func (rt *Runtime) Pool() *gpu.Pool { return rt.compute.Pool() }

// Profile returns the execution profile of every compute kernel called so
// far, and the buffer pool's counters (compute.Orchestrator.Profile).
func (rt *Runtime) Profile() Profile { return rt.compute.Profile() }

// Names of package compute, for calls through the runtime.
type (
	// ExecOption configures one execution (compute.ExecOption).
	ExecOption = compute.ExecOption
	// ExecProfile is what one execution cost (compute.ExecProfile).
	ExecProfile = compute.ExecProfile
	// Job is a submitted execution (compute.Job).
	Job = compute.Job
	// JobState is where a submitted execution stands (compute.JobState).
	JobState = compute.JobState
	// Pipeline is a sequence of compute kernels (compute.Pipeline).
	Pipeline = compute.Pipeline
	// Validation configures cross-backend validation (compute.Validation).
	Validation = compute.Validation
	// ValidationError reports the first element that differed
	// (compute.ValidationError).
	ValidationError = compute.ValidationError
	// KernelProfile aggregates one compute kernel's executions
	// (compute.KernelProfile).
	KernelProfile = compute.KernelProfile
	// Profile is an orchestrator-wide snapshot of execution profiles
	// (compute.Profile).
	Profile = compute.Profile
	// PoolProfile is the buffer pool's counters (compute.PoolProfile).
	PoolProfile = compute.PoolProfile
)

// Job states (compute's).
const (
	JobPending   = compute.JobPending
	JobCompleted = compute.JobCompleted
	JobFailed    = compute.JobFailed
)

// DefaultChunk is Map's default chunk size in elements (compute.DefaultChunk).
const DefaultChunk = compute.DefaultChunk

// ErrValidation: a result differs from the reference backend's
// (compute.ErrValidation).
var ErrValidation = compute.ErrValidation

// WithScalars passes the kernel's scalar parameters (compute.WithScalars).
func WithScalars(s ...float64) ExecOption { return compute.WithScalars(s...) }

// OnBackend runs the call on the named backend (compute.OnBackend).
func OnBackend(name string) ExecOption { return compute.OnBackend(name) }

// IntoBuffer writes the result into out (compute.IntoBuffer).
func IntoBuffer(out *gpu.UnifiedBuffer) ExecOption { return compute.IntoBuffer(out) }

// Profiled fills p with the call's profile (compute.Profiled).
func Profiled(p *ExecProfile) ExecOption { return compute.Profiled(p) }

// CrossValidate forces (true) or skips (false) cross-backend validation of
// this call (compute.CrossValidate).
func CrossValidate(on bool) ExecOption { return compute.CrossValidate(on) }

// computeOption is a runtime option that configures its orchestrator.
func computeOption(o compute.Option) Option {
	return func(c *runtimeConfig) { c.compute = append(c.compute, o) }
}

// WithAccelerator sets the default accelerator: gpu.Auto (by workload),
// gpu.PreferCPU or gpu.PreferCUDA (a device when one is usable, the CPU
// otherwise). Default Auto (compute.WithAccelerator).
func WithAccelerator(a gpu.Accelerator) Option { return computeOption(compute.WithAccelerator(a)) }

// WithAdaptiveSelection turns adaptive backend selection on or off.
// Default on (compute.WithAdaptiveSelection).
func WithAdaptiveSelection(on bool) Option {
	return computeOption(compute.WithAdaptiveSelection(on))
}

// WithMinDeviceWork sets the work (elements × kernel cost) below which
// automatic selection keeps a call on the CPU (compute.WithMinDeviceWork).
func WithMinDeviceWork(w float64) Option { return computeOption(compute.WithMinDeviceWork(w)) }

// WithRecovery sets the recovery policy of executions. Default
// supervision.DefaultRecovery(); pass supervision.Recovery{} to turn it off.
func WithRecovery(r supervision.Recovery) Option { return computeOption(compute.WithRecovery(r)) }

// WithValidation turns on cross-backend validation (default off).
func WithValidation(v Validation) Option { return computeOption(compute.WithValidation(v)) }

// WithBackends adds compute backends beyond the built-in CPU backend (and
// the CUDA backend where one is usable).
func WithBackends(b ...gpu.Backend) Option { return computeOption(compute.WithBackends(b...)) }

// WithPool sets the buffer pool executions draw their outputs from (default:
// a pool of the runtime's own).
func WithPool(p *gpu.Pool) Option { return computeOption(compute.WithPool(p)) }

// WithMaxAllocation sets the limit, in bytes, on the host storage of one
// buffer the runtime's own pool allocates (compute.WithMaxAllocation).
func WithMaxAllocation(n int64) Option { return computeOption(compute.WithMaxAllocation(n)) }
