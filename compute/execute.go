package compute

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/supervision"
)

// ExecOption configures one execution.
type ExecOption func(*execOptions)

type execOptions struct {
	scalars  []float64
	backend  string
	prefer   string
	out      *gpu.UnifiedBuffer
	profile  *ExecProfile
	validate int8 // 0 runtime default, 1 force, -1 skip
}

// WithScalars passes the kernel's scalar parameters, in the order its spec
// names them (e.g. scale's factor, leaky_relu's slope, blur's radius and
// sigma); missing trailing scalars take their defaults.
func WithScalars(s ...float64) ExecOption { return func(o *execOptions) { o.scalars = s } }

// OnBackend runs the call on the named backend (a name like "cuda:0" or a
// kind like "cpu"), overriding automatic selection.
func OnBackend(name string) ExecOption { return func(o *execOptions) { o.backend = name } }

// preferBackend picks the named backend when it can run the call, without
// pinning it (recovery may still fall back).
func preferBackend(name string) ExecOption { return func(o *execOptions) { o.prefer = name } }

// IntoBuffer writes the result into out (of the right dtype and shape)
// instead of a buffer from the pool.
func IntoBuffer(out *gpu.UnifiedBuffer) ExecOption { return func(o *execOptions) { o.out = out } }

// Profiled fills p with the call's profile.
func Profiled(p *ExecProfile) ExecOption { return func(o *execOptions) { o.profile = p } }

// CrossValidate forces (true) or skips (false) cross-backend validation of
// this call, whatever the runtime's sampling rate.
func CrossValidate(on bool) ExecOption {
	return func(o *execOptions) {
		if on {
			o.validate = 1
		} else {
			o.validate = -1
		}
	}
}

// ExecProfile is what one execution cost.
type ExecProfile struct {
	Kernel    string
	Backend   string        // where it finally ran
	Duration  time.Duration // the kernel's run, retries included
	BytesIn   int64         // host → device
	BytesOut  int64         // device → host
	Retries   int           // transient failures retried
	Fallback  bool          // a device failure moved it to the CPU
	Splits    int           // out-of-memory batch splits
	Validated bool          // compared against the reference backend
}

// call is one checked execution request.
type call struct {
	spec    *gpu.KernelSpec
	dtype   gpu.DType
	outDT   gpu.DType
	shape   gpu.Shape
	n       int
	scalars []float64
}

// Execute runs a compute kernel once: kernel is a registered name (see
// `ringactor kernels`), inputs its input buffers, outShape the expected
// output shape (nil: inferred). The result comes from the orchestrator's pool;
// Free it to return its memory.
func (orc *Orchestrator) Execute(ctx context.Context, kernel string, inputs []*gpu.UnifiedBuffer, outShape gpu.Shape, opts ...ExecOption) (*gpu.UnifiedBuffer, error) {
	st := getExecState()
	defer putExecState(st)
	o := &st.opts
	for _, opt := range opts {
		opt(o)
	}
	c, err := orc.check(ctx, kernel, inputs, outShape, o.scalars, st)
	if err != nil {
		return nil, err
	}
	// A Free of an input or of the given output while the kernel runs
	// takes effect when it ends.
	if err := acquireUses(kernel, inputs, o.out); err != nil {
		return nil, err
	}
	defer orc.releaseUses(inputs, o.out)
	out, owned, err := orc.output(&c, o.out)
	if err != nil {
		return nil, err
	}
	st.items[0], st.outs[0] = inputs, out
	if err := orc.run(ctx, &c, st.items[:], st.outs[:], o); err != nil {
		if owned {
			_ = out.Free()
		}
		return nil, err
	}
	return out, nil
}

// acquireAll takes a use (gpu.UnifiedBuffer.Acquire) of every buffer, or of
// none: a freed one is a *gpu.MemoryError wrapping gpu.ErrFreed.
func acquireAll(kernel, what string, bufs []*gpu.UnifiedBuffer) error {
	for i, b := range bufs {
		if err := b.Acquire(); err != nil {
			for _, a := range bufs[:i] {
				_ = a.Release()
			}
			return &gpu.MemoryError{Op: kernel, Reason: fmt.Sprintf("%s %d is a freed buffer", what, i), Err: gpu.ErrFreed}
		}
	}
	return nil
}

// acquireUses takes a use on an execution's inputs and on its given output
// (nil: none), all or nothing.
func acquireUses(kernel string, inputs []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer) error {
	if err := acquireAll(kernel, "input", inputs); err != nil {
		return err
	}
	if out != nil {
		if err := out.Acquire(); err != nil {
			for _, b := range inputs {
				_ = b.Release()
			}
			return &gpu.MemoryError{Op: kernel, Reason: "output is a freed buffer", Err: gpu.ErrFreed}
		}
	}
	return nil
}

// releaseUses gives back the uses acquireUses took.
func (orc *Orchestrator) releaseUses(inputs []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer) {
	orc.releaseAll(inputs)
	if out != nil {
		orc.release(out)
	}
}

// releaseAll gives back the uses acquireAll took.
func (orc *Orchestrator) releaseAll(bufs []*gpu.UnifiedBuffer) {
	for _, b := range bufs {
		orc.release(b)
	}
}

// release gives back one use; the last use of a buffer freed meanwhile
// releases its memory, and a device error doing so is logged (the caller
// that freed it has gone).
func (orc *Orchestrator) release(b *gpu.UnifiedBuffer) {
	if err := b.Release(); err != nil {
		orc.logger.Warn("ringactor: releasing a buffer freed during an execution", "error", err)
	}
}

// check validates a call against the kernel's spec.
//
// st, when not nil, lends the call's scratch memory (the resolved scalars,
// the input shapes) so that a check allocates nothing; the call then refers
// to st's scalars and must not outlive it.
func (orc *Orchestrator) check(ctx context.Context, kernel string, inputs []*gpu.UnifiedBuffer, outShape gpu.Shape, scalars []float64, st *execState) (call, error) {
	var c call
	if err := ctx.Err(); err != nil {
		return c, kernelErr(kernel, err)
	}
	if orc.closed.Load() {
		return c, ErrClosed
	}
	spec, err := orc.registry.Lookup(kernel)
	if err != nil {
		return c, kernelErr(kernel, err)
	}
	c.spec = spec
	if len(inputs) != spec.Inputs {
		return c, &gpu.ArgumentError{Kernel: kernel, Arg: "inputs", Reason: fmt.Sprintf("takes %d inputs, got %d", spec.Inputs, len(inputs)), Err: gpu.ErrInputCount}
	}
	var inShapes []gpu.Shape
	var scratch []float64
	if st != nil {
		inShapes, scratch = st.shapes[:0], st.scalars[:0]
	}
	for i, b := range inputs {
		if b == nil {
			return c, &gpu.ArgumentError{Kernel: kernel, Arg: fmt.Sprintf("input %d", i), Reason: "nil buffer", Err: gpu.ErrArgument}
		}
		if b.Freed() {
			return c, &gpu.MemoryError{Op: kernel, Reason: fmt.Sprintf("input %d is a freed buffer", i), Err: gpu.ErrFreed}
		}
		inShapes = append(inShapes, b.ShapeRef())
	}
	c.dtype = inputs[0].DType()
	if !spec.Supports(c.dtype) {
		return c, &gpu.ArgumentError{Kernel: kernel, Arg: "input 0", Reason: fmt.Sprintf("dtype %v not supported (supports %v)", c.dtype, spec.DTypes), Err: gpu.ErrUnsupportedDType}
	}
	for i, b := range inputs {
		if want := spec.InputDType(c.dtype, i); b.DType() != want {
			return c, &gpu.ArgumentError{Kernel: kernel, Arg: fmt.Sprintf("input %d", i), Reason: fmt.Sprintf("buffer is %v, want %v", b.DType(), want), Err: gpu.ErrDTypeMismatch}
		}
	}
	if c.scalars, err = spec.ResolveScalars(scalars, scratch); err != nil {
		return c, err
	}
	if c.shape, err = spec.OutShape(inShapes, c.scalars); err != nil {
		return c, err
	}
	if outShape != nil {
		if err := outShape.Validate(); err != nil {
			return c, err
		}
		if !outShape.Equal(c.shape) {
			return c, &gpu.ShapeError{Shape: outShape, Reason: fmt.Sprintf("kernel %q produces %v", kernel, c.shape)}
		}
	}
	c.outDT = spec.OutputDType(c.dtype)
	c.n = max(c.shape.Len(), inShapes[0].Len())
	return c, nil
}

// output returns the buffer a call writes: the caller's, checked, or a
// pooled one (owned: freed again if the call fails).
func (orc *Orchestrator) output(c *call, given *gpu.UnifiedBuffer) (*gpu.UnifiedBuffer, bool, error) {
	if given == nil {
		b, err := orc.pool.Get(c.outDT, c.shape)
		return b, true, err
	}
	if given.Freed() {
		return nil, false, &gpu.MemoryError{Op: c.spec.Name, Reason: "output is a freed buffer", Err: gpu.ErrFreed}
	}
	if given.DType() != c.outDT {
		return nil, false, &gpu.ArgumentError{Kernel: c.spec.Name, Arg: "output", Reason: fmt.Sprintf("buffer is %v, want %v", given.DType(), c.outDT), Err: gpu.ErrDTypeMismatch}
	}
	if !given.ShapeRef().Equal(c.shape) {
		return nil, false, &gpu.ShapeError{Shape: given.Shape(), Reason: fmt.Sprintf("output must be %v", c.shape)}
	}
	return given, false, nil
}

// run executes items on the chosen backend under the recovery policy, then
// validates, profiles and records telemetry.
func (orc *Orchestrator) run(ctx context.Context, c *call, items [][]*gpu.UnifiedBuffer, outs []*gpu.UnifiedBuffer, o *execOptions) error {
	orc.reportBackends()
	backend, err := orc.selector.Choose(c.spec, c.dtype, c.n*len(items), o.backend)
	if err != nil {
		return err
	}
	preferred := false
	if o.backend == "" && o.prefer != "" {
		if b, ok := orc.selector.Backend(o.prefer); ok && b.Available() == nil && b.Supports(c.spec, c.dtype) {
			backend, preferred = b, true
		}
	}
	if d := orc.devices; len(d.backends) > 1 {
		// Several devices: a call no backend name pins goes to the least
		// loaded (or the one its buffers live on).
		if !preferred && (o.backend == "" || o.backend == string(backend.Kind())) {
			backend = d.pick(backend, c, items, outs)
		}
		if i := d.slot(backend); i >= 0 {
			d.inflight[i].Add(1)
			defer d.inflight[i].Add(-1)
		}
	}
	span := trace.SpanFromContext(ctx) // a non-recording span when tracing is off
	if orc.executionSpans() {
		ctx, span = orc.tracer.Start(ctx, "ringactor.execute")
		defer span.End()
	}
	p := ExecProfile{Kernel: c.spec.Name}
	start := time.Now()
	backend, err = orc.attempt(ctx, work{call: *c, items: items, outs: outs, pinned: o.backend != ""}, backend, &p)
	p.Duration = time.Since(start)
	if backend != nil {
		p.Backend = backend.Name()
	}
	if err == nil {
		orc.selector.Observe(c.spec, c.n*len(items), backend, p.Duration)
		err = orc.maybeValidate(ctx, *c, backend, items, outs, o, &p)
	}
	if span.IsRecording() {
		span.SetAttributes(attribute.String("kernel", c.spec.Name), attribute.String("backend", p.Backend), attribute.Int("elements", c.n*len(items)))
		if err != nil {
			span.SetStatus(codes.Error, err.Error())
		}
	}
	orc.profiler.record(&p, err)
	orc.ins.RecordExecution(ctx, c.spec.Name, p.Backend, p.Duration, p.BytesIn, p.BytesOut)
	if o.profile != nil {
		*o.profile = p
	}
	return err
}

// work is what one attempt runs: the call, its input items and their
// outputs (one per item), and whether the caller pinned the backend (then a
// device failure is not moved to the CPU).
type work struct {
	call
	items  [][]*gpu.UnifiedBuffer
	outs   []*gpu.UnifiedBuffer
	pinned bool
}

// halves splits the work's items (and outputs) in two.
func (w work) halves() (work, work) {
	half := len(w.items) / 2
	a, b := w, w
	a.items, a.outs = w.items[:half], w.outs[:half]
	b.items, b.outs = w.items[half:], w.outs[half:]
	return a, b
}

// attempt runs the work on b, retrying, falling back and splitting as the
// recovery policy says. It returns the backend that finally ran it.
func (orc *Orchestrator) attempt(ctx context.Context, w work, b gpu.Backend, p *ExecProfile) (gpu.Backend, error) {
	c := w.call
	retries := 0
	for {
		p.BytesIn += transferBytes(b, w.items)
		err := safeExecute(ctx, b, c, w.items, w.outs)
		if err == nil {
			if b.Allocator() != nil {
				for _, out := range w.outs {
					out.MarkDeviceDirty()
				}
			}
			return b, nil
		}
		onDevice := b.Kind() != gpu.KindCPU
		switch orc.cfg.recovery.Classify(err, onDevice && !w.pinned, retries) {
		case supervision.Retry:
			retries++
			p.Retries++
			if werr := orc.cfg.recovery.Wait(ctx, retries); werr != nil {
				return b, kernelErr(c.spec.Name, werr)
			}
		case supervision.Fallback:
			cpu, ok := orc.selector.CPU()
			if !ok || !cpu.Supports(c.spec, c.dtype) {
				return b, err
			}
			orc.logger.Warn("ringactor: device failed, running on the CPU", "kernel", c.spec.Name, "backend", b.Name(), "error", err)
			b, retries, p.Fallback = cpu, 0, true
		case supervision.Split:
			if len(w.items) == 1 {
				// One item that does not fit: nothing to split, so the CPU.
				if cpu, ok := orc.selector.CPU(); ok && onDevice && orc.cfg.recovery.Fallback && cpu.Supports(c.spec, c.dtype) {
					b, retries, p.Fallback = cpu, 0, true
					continue
				}
				return b, err
			}
			p.Splits++
			first, second := w.halves()
			if _, err := orc.attempt(ctx, first, b, p); err != nil {
				return b, err
			}
			return orc.attempt(ctx, second, b, p)
		default:
			return b, err
		}
	}
}

// safeExecute runs one backend call, turning a panic into an ExecutionError.
func safeExecute(ctx context.Context, b gpu.Backend, c call, items [][]*gpu.UnifiedBuffer, outs []*gpu.UnifiedBuffer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &gpu.ExecutionError{Kernel: c.spec.Name, Err: fmt.Errorf("panic: %v", r), Panic: r, Stack: debug.Stack()}
		}
	}()
	if len(items) == 1 {
		err = b.Execute(ctx, c.spec, items[0], outs[0], c.scalars)
	} else {
		err = b.ExecuteBatch(ctx, c.spec, items, outs, c.scalars)
	}
	if err != nil && !isClassified(err) {
		err = &gpu.ExecutionError{Kernel: c.spec.Name, Err: err}
	}
	return err
}

// isClassified reports whether err already belongs to the error hierarchy
// (or is a context error).
func isClassified(err error) bool {
	return errors.Is(err, gpu.ErrCompute) || errors.Is(err, gpu.ErrArgument) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// transferBytes is what moving items to b's memory will copy.
func transferBytes(b gpu.Backend, items [][]*gpu.UnifiedBuffer) int64 {
	if b.Allocator() == nil {
		return 0
	}
	var n int64
	for _, in := range items {
		for _, buf := range in {
			if buf.HostDirty() {
				n += int64(buf.ByteSize())
			}
		}
	}
	return n
}
