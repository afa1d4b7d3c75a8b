package stream

import (
	"context"
	"errors"
	"fmt"

	"github.com/ringactor/ringactor/actors"
)

// NewKernelStage declares a stage that is an existing ring kernel of package
// actors — a CPU kernel or a device kernel (actors.NewDeviceKernel), where
// its message and reply types are the edge's element types. Start launches
// def in the graph's runtime and Stop terminates it; each element is a
// Request to it and its reply is emitted, in order; a failed Request is the
// element's outcome. def must not route downstream (WithDownstream): the
// graph's edges do that. The stage runs one instance (def has one id).
func NewKernelStage[In, Out any](g *Graph, name string, def *actors.KernelDef[In, Out]) *Stage[In, Out] {
	var k *actors.Kernel[In, Out]
	var newFuncs func() Funcs[In, Out]
	if def != nil {
		newFuncs = func() Funcs[In, Out] {
			return Funcs[In, Out]{Element: func(c *Context, v In, out *Emitter[Out]) error {
				r, err := k.Request(c.ctx, v)
				if err != nil {
					return err
				}
				out.Emit(r)
				return nil
			}}
		}
	}
	s := NewStage(g, name, newFuncs)
	if def == nil {
		return s
	}
	launch, stop := s.n.launch, s.n.stop
	s.n.launch = func(ctx context.Context) error {
		kk, err := actors.Launch(ctx, g.rt, def)
		if err != nil {
			return fmt.Errorf("kernel %q: %w", def.ID(), err)
		}
		if err := kk.Activate(ctx); err != nil {
			return errors.Join(err, kk.Terminate(context.WithoutCancel(ctx)))
		}
		k = kk
		if err := launch(ctx); err != nil {
			return errors.Join(err, kk.Terminate(context.WithoutCancel(ctx)))
		}
		return nil
	}
	s.n.stop = func(ctx context.Context) error {
		err := stop(ctx) // the stage first: it may still be requesting
		if k != nil {
			if terr := k.Terminate(ctx); terr != nil && !errors.Is(terr, actors.ErrTerminated) {
				err = errors.Join(err, terr)
			}
		}
		return err
	}
	return s
}
