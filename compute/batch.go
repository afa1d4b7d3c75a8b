package compute

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/ringactor/ringactor/gpu"
)

// ExecuteBatch runs a kernel on several independent items (each a list of
// input buffers) in one backend call, returning one output per item. A
// device that runs out of memory gets the batch in halves.
//
// The batch costs one call's overhead, not one per item: the first item is
// checked against the kernel's spec and every item like it (the same
// number of inputs, each live with the first's dtype and shape) is not
// checked again; the backend is chosen, the call validated (when sampled),
// profiled and recorded in telemetry once; the outputs come from the pool
// in one trip (gpu.Pool.GetBatch). Its allocations are the returned slice
// and one block of output headers, whatever the number of items.
func (orc *Orchestrator) ExecuteBatch(ctx context.Context, kernel string, items [][]*gpu.UnifiedBuffer, opts ...ExecOption) ([]*gpu.UnifiedBuffer, error) {
	st := getExecState()
	defer putExecState(st)
	o := &st.opts
	for _, opt := range opts {
		opt(o)
	}
	if len(items) == 0 {
		return nil, &gpu.ArgumentError{Kernel: kernel, Arg: "items", Reason: "empty batch", Err: gpu.ErrArgument}
	}
	if o.out != nil {
		return nil, &gpu.ArgumentError{Kernel: kernel, Arg: "output", Reason: "IntoBuffer does not apply to a batch", Err: gpu.ErrArgument}
	}
	c, err := orc.check(ctx, kernel, items[0], nil, o.scalars, st)
	if err != nil {
		return nil, fmt.Errorf("batch item 0: %w", err)
	}
	for i, in := range items[1:] {
		if likeFirst(items[0], in) {
			continue // the first item's check holds for it
		}
		// The same scalars each time: c.scalars (st's) resolve the same.
		ci, err := orc.check(ctx, kernel, in, nil, o.scalars, st)
		if err != nil {
			return nil, fmt.Errorf("batch item %d: %w", i+1, err)
		}
		if ci.dtype != c.dtype || !ci.shape.Equal(c.shape) {
			return nil, &gpu.ArgumentError{Kernel: kernel, Arg: fmt.Sprintf("item %d", i+1), Reason: "every item of a batch must have the first item's dtypes and shapes", Err: gpu.ErrArgument}
		}
	}
	for i, in := range items {
		if err := acquireAll(kernel, "input", in); err != nil {
			for _, done := range items[:i] {
				orc.releaseAll(done)
			}
			return nil, fmt.Errorf("batch item %d: %w", i, err)
		}
	}
	defer func() {
		for _, in := range items {
			orc.releaseAll(in)
		}
	}()
	outs := make([]*gpu.UnifiedBuffer, len(items))
	if err := orc.pool.GetBatch(c.outDT, c.shape, outs); err != nil {
		return nil, err
	}
	if err := orc.run(ctx, &c, items, outs, o); err != nil {
		for _, b := range outs {
			_ = b.Free()
		}
		return nil, err
	}
	return outs, nil
}

// likeFirst reports whether a batch item has the first item's number of
// inputs, each live with the first's dtype and shape: then the first item's
// check (kernel, dtypes, output shape) holds for it and is not repeated.
// Anything else gets the full check, and its error.
func likeFirst(first, in []*gpu.UnifiedBuffer) bool {
	if len(in) != len(first) {
		return false
	}
	for j, b := range in {
		f := first[j]
		if b == nil || b.Freed() || b.DType() != f.DType() || !b.ShapeRef().Equal(f.ShapeRef()) {
			return false
		}
	}
	return true
}

// DefaultChunk is Map's default chunk size in elements.
const DefaultChunk = 1 << 16

// Map runs an elementwise kernel over its inputs in chunks of chunk elements
// (0: DefaultChunk), in parallel across the cores, into one output.
func (orc *Orchestrator) Map(ctx context.Context, kernel string, inputs []*gpu.UnifiedBuffer, chunk int, opts ...ExecOption) (*gpu.UnifiedBuffer, error) {
	var o execOptions
	for _, opt := range opts {
		opt(&o)
	}
	c, err := orc.check(ctx, kernel, inputs, nil, o.scalars, nil)
	if err != nil {
		return nil, err
	}
	if !c.spec.Elementwise {
		return nil, &gpu.ArgumentError{Kernel: kernel, Arg: "kernel", Reason: "Map needs an elementwise kernel", Err: gpu.ErrArgument}
	}
	if chunk <= 0 {
		chunk = DefaultChunk
	}
	if err := acquireUses(kernel, inputs, o.out); err != nil {
		return nil, err
	}
	defer orc.releaseUses(inputs, o.out)
	out, owned, err := orc.output(&c, o.out)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*gpu.UnifiedBuffer, error) {
		if owned {
			_ = out.Free()
		}
		return nil, err
	}
	for _, in := range inputs { // chunks are views of host memory
		if err := in.EnsureOnHost(ctx); err != nil {
			return fail(err)
		}
	}
	n := c.shape.Len()
	chunks := (n + chunk - 1) / chunk
	errs := make(chan error, chunks)
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), chunks); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for lo := range work {
				errs <- orc.mapChunk(ctx, c, inputs, out, lo, min(lo+chunk, n), o)
			}
		}()
	}
	for lo := 0; lo < n; lo += chunk {
		work <- lo
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return fail(err)
		}
	}
	out.MarkHostDirty()
	return out, nil
}

// mapChunk runs elements [lo, hi) of a Map.
func (orc *Orchestrator) mapChunk(ctx context.Context, c call, inputs []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, lo, hi int, o execOptions) error {
	views := make([]*gpu.UnifiedBuffer, len(inputs))
	for i, in := range inputs {
		v, err := in.View(lo, hi)
		if err != nil {
			return err
		}
		views[i] = v
	}
	ov, err := out.View(lo, hi)
	if err != nil {
		return err
	}
	cc := c
	cc.shape, cc.n = gpu.Shape{hi - lo}, hi-lo
	o.profile = nil
	if err := orc.run(ctx, &cc, [][]*gpu.UnifiedBuffer{views}, []*gpu.UnifiedBuffer{ov}, &o); err != nil {
		return err
	}
	// Results a device computed come back into the output's host memory;
	// the views' device memory is released.
	err = ov.EnsureOnHost(ctx)
	for _, v := range append(views, ov) {
		_ = v.Free()
	}
	return err
}

// Reduce runs a reduction kernel ("sum", "min", "max", "mean") over input
// and returns the scalar result as T, which must be the kernel's output
// dtype (the input's, or float64 for "mean").
func Reduce[T gpu.Number](ctx context.Context, orc *Orchestrator, kernel string, input *gpu.UnifiedBuffer, opts ...ExecOption) (T, error) {
	var zero T
	out, err := orc.Execute(ctx, kernel, []*gpu.UnifiedBuffer{input}, gpu.Shape{1}, opts...)
	if err != nil {
		return zero, err
	}
	defer func() { _ = out.Free() }()
	if err := out.EnsureOnHost(ctx); err != nil {
		return zero, err
	}
	s, err := gpu.HostSlice[T](out)
	if err != nil {
		return zero, &gpu.ArgumentError{Kernel: kernel, Arg: "result type", Reason: err.Error(), Err: gpu.ErrDTypeMismatch}
	}
	return s[0], nil
}
