package compute

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ringactor/ringactor/gpu"
)

// Validation configures cross-backend validation: a sample of executions is
// run again on a reference backend and the results compared.
type Validation struct {
	// Enabled turns validation on.
	Enabled bool
	// Reference is the backend results are compared against (default "cpu").
	Reference string
	// Tolerance bounds |got − want| ≤ Tolerance × max(1, |want|) for floats;
	// integers must be equal. Default 1e-5.
	Tolerance float64
	// SampleRate is the fraction of executions validated, in (0, 1]
	// (default 1: debug); use e.g. 0.01 in production.
	SampleRate float64
	// Strict returns a mismatch as the execution's error; otherwise it is
	// logged and counted in the profile.
	Strict bool
}

// ErrValidation: a result differs from the reference backend's.
var ErrValidation = errors.New("ringactor: cross-backend validation mismatch")

// ValidationError reports the first element that differed.
type ValidationError struct {
	Kernel, Backend, Reference string
	Index                      int
	Got, Want                  float64
}

// Error implements error.
func (e *ValidationError) Error() string {
	return fmt.Sprintf("ringactor: kernel %q on %s differs from %s at element %d: got %v, want %v",
		e.Kernel, e.Backend, e.Reference, e.Index, e.Got, e.Want)
}

// Is matches ErrValidation.
func (e *ValidationError) Is(target error) bool { return target == ErrValidation }

// maybeValidate runs the reference comparison when this call is sampled.
func (orc *Orchestrator) maybeValidate(ctx context.Context, c call, b gpu.Backend, items [][]*gpu.UnifiedBuffer, outs []*gpu.UnifiedBuffer, o *execOptions, p *ExecProfile) error {
	v := orc.cfg.validation
	switch {
	case o.validate < 0, o.validate == 0 && !v.Enabled:
		return nil
	case o.validate == 0 && v.SampleRate > 0 && v.SampleRate < 1 && rand.Float64() >= v.SampleRate:
		return nil
	}
	refName := v.Reference
	if refName == "" {
		refName = string(gpu.KindCPU)
	}
	ref, ok := orc.selector.Backend(refName)
	if !ok || ref.Name() == b.Name() || ref.Available() != nil || !ref.Supports(c.spec, c.dtype) {
		return nil // nothing different to compare with
	}
	tol := v.Tolerance
	if tol == 0 {
		tol = 1e-5
	}
	p.Validated = true
	for i, in := range items {
		for _, buf := range in {
			if err := buf.EnsureOnHost(ctx); err != nil {
				return err
			}
		}
		want, err := orc.pool.Get(c.outDT, c.shape)
		if err != nil {
			return err
		}
		err = ref.Execute(ctx, c.spec, in, want, c.scalars)
		if err == nil {
			err = compare(ctx, c.spec.Name, b.Name(), ref.Name(), outs[i], want, tol)
		}
		_ = want.Free()
		if errors.Is(err, ErrValidation) {
			orc.profiler.mismatch(c.spec.Name)
			if !v.Strict {
				orc.logger.Warn("ringactor: validation mismatch", "error", err)
				continue
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// compare checks got against want element by element.
func compare(ctx context.Context, kernel, backend, reference string, got, want *gpu.UnifiedBuffer, tol float64) error {
	g, err := asFloat64s(ctx, got)
	if err != nil {
		return err
	}
	w, err := asFloat64s(ctx, want)
	if err != nil {
		return err
	}
	exact := !got.DType().IsFloat()
	for i := range w {
		a, b := g[i], w[i]
		if math.IsNaN(a) && math.IsNaN(b) {
			continue
		}
		if a == b {
			continue
		}
		if exact || math.IsNaN(a) || math.IsNaN(b) || math.Abs(a-b) > tol*math.Max(1, math.Abs(b)) {
			return &ValidationError{Kernel: kernel, Backend: backend, Reference: reference, Index: i, Got: a, Want: b}
		}
	}
	return nil
}

// asFloat64s reads any buffer as float64 values (exact for every dtype but
// s64 beyond 2^53, which only validation uses).
func asFloat64s(ctx context.Context, b *gpu.UnifiedBuffer) ([]float64, error) {
	if err := b.EnsureOnHost(ctx); err != nil {
		return nil, err
	}
	out := make([]float64, b.Len())
	var err error
	switch b.DType() {
	case gpu.F32:
		err = widen[float32](b, out)
	case gpu.F64:
		err = widen[float64](b, out)
	case gpu.S32:
		err = widen[int32](b, out)
	case gpu.S64:
		err = widen[int64](b, out)
	case gpu.U32:
		err = widen[uint32](b, out)
	case gpu.U8:
		err = widen[uint8](b, out)
	}
	return out, err
}

func widen[T gpu.Number](b *gpu.UnifiedBuffer, out []float64) error {
	s, err := gpu.HostSlice[T](b)
	for i, v := range s {
		out[i] = float64(v)
	}
	return err
}
