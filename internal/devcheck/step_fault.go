package devcheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/ringactor/ringactor/internal/devkernels"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/messages"
)

// faultStep traps in a device handler (a device fault, sticky for the
// whole context on a GPU: it runs last): the message in flight gets an
// ExecutionError wrapping the fault, the kernel's queued messages and
// every other device ring kernel of the backend move to their fallbacks,
// in order, and the backend reports the failure.
var faultStep = Step{
	Name:    "fault",
	Checks:  "a device fault (__trap in a handler) fails the message in flight, moves every device ring kernel to its fallback with its queued messages in order, marks the backend failed",
	Timeout: 60 * time.Second,
	run:     runFault,
}

func runFault(ctx context.Context, e *Env) error {
	rt, b, err := e.Runtime()
	if err != nil {
		return err
	}
	defT, err := actors.NewDeviceRingKernel("trapper", actors.DeviceSource{Code: trapCUDA, Entry: "trapper"}, saxpyFallback("trapper"))
	if err != nil {
		return err
	}
	defS, err := saxpyDef("saxpy-beside")
	if err != nil {
		return err
	}
	kt, err := launch(ctx, rt, defT)
	if err != nil {
		return err
	}
	ks, err := launch(ctx, rt, defS)
	if err != nil {
		return err
	}
	if err := errors.Join(placement(kt.Placement(), b), placement(ks.Placement(), b)); err != nil {
		return err
	}
	msgs := make([]devkernels.SaxpyReq, 12)
	for i := range msgs {
		msgs[i] = devkernels.SaxpyReq{A: float32(i + 1), N: 8}
		for j := range 8 {
			msgs[i].X[j], msgs[i].Y[j] = float32(j), float32(i)
		}
	}
	msgs[3].A = 13 // traps on the device
	e.Progress("12 messages, the fourth traps")
	start := time.Now()
	out, err := pipeline(ctx, kt, msgs)
	if err != nil {
		return err
	}
	e.Set("moved_ms", ms(time.Since(start)))
	fallback := saxpyFallback("trapper")()
	for j, o := range out {
		if j == 3 {
			var ee *gpu.ExecutionError
			var de *gpu.DeviceError
			if !errors.As(o.err, &ee) || !errors.As(o.err, &de) || de.Kind != gpu.DeviceFailed {
				return fmt.Errorf("the trapping message: %v, want an ExecutionError wrapping the device fault", o.err)
			}
			e.Set("fault", o.err.Error())
			continue
		}
		want, _ := fallback(ctx, msgs[j])
		if o.err != nil || !bytes.Equal(messages.FixedBytes(&o.resp), messages.FixedBytes(&want)) {
			return fmt.Errorf("message %d: %v (%v), want the fallback's reply", j, o.resp.Z[:8], o.err)
		}
	}
	if kt.Placement() != actors.PlacementCPU {
		return fmt.Errorf("the faulted kernel's placement is %q, want %s", kt.Placement(), actors.PlacementCPU)
	}
	var de *gpu.DeviceError
	if err := b.Available(); !errors.As(err, &de) || de.Kind != gpu.DeviceFailed {
		return fmt.Errorf("backend after the fault: %v, want a DeviceFailed error", err)
	}
	e.Progress("the kernel beside answers from its fallback")
	r, err := ks.Request(ctx, msgs[0])
	want, _ := fallback(ctx, msgs[0])
	if err != nil || !bytes.Equal(messages.FixedBytes(&r), messages.FixedBytes(&want)) {
		return fmt.Errorf("the kernel beside: %v, %v", r.Z[:8], err)
	}
	if ks.Placement() != actors.PlacementCPU {
		return fmt.Errorf("the kernel beside is placed on %q after the fault", ks.Placement())
	}
	for _, k := range []*actors.Kernel[devkernels.SaxpyReq, devkernels.SaxpyResp]{kt, ks} {
		if err := k.Terminate(ctx); err != nil {
			return err
		}
	}
	// A faulted context may report its fault again when it closes, and a
	// driver call on it might not return: the close is bounded, its
	// outcome a figure (the step's checks held either way; the process
	// ends after the step).
	e.closers = e.closers[:0]
	closed := make(chan error, 1)
	go func() {
		cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		closed <- errors.Join(rt.Close(cctx), b.Close())
	}()
	select {
	case err := <-closed:
		outcome := "ok"
		if err != nil {
			outcome = err.Error()
		}
		e.Set("close_after_fault", outcome)
	case <-time.After(25 * time.Second):
		e.Set("close_after_fault", "did not return within 25s")
	}
	return nil
}
