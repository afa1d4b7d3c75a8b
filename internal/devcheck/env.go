package devcheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/supervision"
)

// simMemBytes is the simulated device's memory.
const simMemBytes = 512 << 20

// Env is what a step runs with: where (simulated or real device), how long
// (quick or not), its figures, and what it opened (closed after it).
type Env struct {
	cfg     Config
	figures map[string]any
	skipped []string
	closers []func() error
}

func newEnv(cfg Config) *Env {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	return &Env{cfg: cfg, figures: map[string]any{}}
}

// Sim reports whether the step runs on the simulated device.
func (e *Env) Sim() bool { return e.cfg.Sim }

// Quick reports whether the step runs its short configuration.
func (e *Env) Quick() bool { return e.cfg.Quick }

// Set records a figure of the step's report.
func (e *Env) Set(name string, v any) { e.figures[name] = v }

// SimOnly records a check that only the simulated device can make, skipped
// on a real one: the step passes without it and its report lists it under
// "skipped_checks" with the reason.
func (e *Env) SimOnly(check string) {
	e.skipped = append(e.skipped, check+": only the simulated device can check this")
}

// Progress writes one line of what the step is doing: the last one names
// the call that hung when a step is killed.
func (e *Env) Progress(format string, args ...any) {
	fmt.Fprintf(e.cfg.Log, "%s devcheck: %s\n", time.Now().UTC().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// pick returns sim, quick or full by where the step runs: the simulated
// device gets the smallest sizes, --quick the middle ones.
func pick[T any](e *Env, sim, quick, full T) T {
	switch {
	case e.cfg.Sim:
		return sim
	case e.cfg.Quick:
		return quick
	}
	return full
}

// onClose runs fn when the step ends (last registered first).
func (e *Env) onClose(fn func() error) { e.closers = append(e.closers, fn) }

func (e *Env) close() error {
	var errs []error
	for i := len(e.closers) - 1; i >= 0; i-- {
		errs = append(errs, e.closers[i]())
	}
	e.closers = nil
	return errors.Join(errs...)
}

// Backend opens a CUDA backend of its own with opts: the simulated device,
// or device 0. It is closed when the step ends. Use it for steps that drive the
// backend directly; [Env.Runtime] gives the backend of a runtime.
func (e *Env) Backend(opts ...cuda.BackendOption) (*cuda.Backend, error) {
	var b *cuda.Backend
	if e.cfg.Sim {
		var err error
		if b, err = simBackend(opts...); err != nil {
			return nil, err
		}
	} else {
		b = cuda.NewBackend(opts...)
	}
	if err := b.Available(); err != nil {
		_ = b.Close()
		return nil, fmt.Errorf("backend %s: %w", b.Name(), err)
	}
	e.onClose(b.Close)
	return b, nil
}

// Runtime starts an actors runtime whose CUDA backend is the device under
// test (the simulated one added with WithBackends, or the runtime's own
// cuda:0) and returns that backend. Both are closed when the step ends.
func (e *Env) Runtime(opts ...actors.Option) (*actors.Runtime, *cuda.Backend, error) {
	var sim *cuda.Backend
	base := []actors.Option{
		actors.WithLogger(slog.New(slog.DiscardHandler)),
		actors.WithTelemetry(false),
		actors.WithSupervisor(supervision.NewStrategy(
			supervision.WithLogger(slog.New(slog.DiscardHandler)),
			supervision.WithBackoff(supervision.Backoff{Initial: 50 * time.Microsecond, Max: time.Millisecond, Multiplier: 2}),
		)),
	}
	if e.cfg.Sim {
		var err error
		if sim, err = simBackend(); err != nil {
			return nil, nil, err
		}
		e.onClose(sim.Close)
		base = append(base, actors.WithBackends(sim))
	}
	rt, err := actors.NewRuntime(append(base, opts...)...)
	if err != nil {
		return nil, nil, err
	}
	e.onClose(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return rt.Close(ctx)
	})
	for _, b := range rt.Backends() {
		cb, ok := b.(*cuda.Backend)
		if !ok || (sim != nil && cb != sim) {
			continue
		}
		if err := cb.Available(); err != nil {
			return nil, nil, fmt.Errorf("backend %s: %w", cb.Name(), err)
		}
		return rt, cb, nil
	}
	return nil, nil, errors.New("the runtime has no CUDA backend")
}

// CPURuntime starts an actors runtime for the fallbacks' side of a
// comparison (its ring kernels are plain CPU kernels); closed when the step
// ends.
func (e *Env) CPURuntime() (*actors.Runtime, error) {
	rt, err := actors.NewRuntime(actors.WithLogger(slog.New(slog.DiscardHandler)), actors.WithTelemetry(false))
	if err != nil {
		return nil, err
	}
	e.onClose(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return rt.Close(ctx)
	})
	return rt, nil
}

// placement checks that a device ring kernel runs on b, not on its
// fallback (which would make the step compare the fallback with itself).
func placement(got string, b *cuda.Backend) error {
	if got != b.Name() {
		return fmt.Errorf("device ring kernel placed on %q, want %s (no host compiler for the simulated device, or NVRTC missing?)", got, b.Name())
	}
	return nil
}
