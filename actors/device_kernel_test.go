package actors

import (
	"errors"
	"testing"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/ringmsg"
)

func vecMsg(n int, f func(i int) (float32, float32)) ringmsg.VecMsg {
	m := ringmsg.VecMsg{N: uint32(n)}
	for i := range n {
		m.A[i], m.B[i] = f(i)
	}
	return m
}

// TestDeviceKernelDeclaration: a device kernel's types must be its op's.
func TestDeviceKernelDeclaration(t *testing.T) {
	if _, err := NewDeviceKernel[ringmsg.VecMsg, ringmsg.ScalarReply]("bad", ringmsg.Add); !errors.Is(err, ErrInvalidKernel) {
		t.Fatalf("add answering a scalar: %v, want ErrInvalidKernel", err)
	}
	if _, err := NewDeviceKernel[ringmsg.VecMsg, ringmsg.VecReply]("bad", ringmsg.Op(99)); !errors.Is(err, ErrInvalidKernel) {
		t.Fatalf("unknown op: %v, want ErrInvalidKernel", err)
	}
}

// TestDeviceKernelCPUFallback: with no usable device (this machine: the
// CUDA backend reports why) a device kernel runs the same handler on the
// CPU, and says so.
func TestDeviceKernelCPUFallback(t *testing.T) {
	rt := newTestRuntime(t)
	def, err := NewDeviceKernel[ringmsg.VecMsg, ringmsg.VecReply]("dev-add-cpu", ringmsg.Add)
	if err != nil {
		t.Fatal(err)
	}
	k := mustLaunch(t, rt, def, true)
	if !deviceUsable(rt) && k.Placement() != PlacementCPU {
		t.Fatalf("placement %q without a usable device", k.Placement())
	}
	r, err := k.Request(testCtx(t), vecMsg(5, func(i int) (float32, float32) { return float32(i), 10 }))
	if err != nil || r.N != 5 || r.Y[4] != 14 {
		t.Fatalf("add: %v %v", r.Y[:5], err)
	}
	var ee *gpu.ExecutionError
	_, err = k.Request(testCtx(t), ringmsg.VecMsg{N: ringmsg.VecMax + 1})
	if !errors.As(err, &ee) || !errors.Is(err, gpu.ErrArgument) {
		t.Fatalf("n > VecMax: %v, want an ExecutionError wrapping ErrArgument", err)
	}
}

// deviceUsable reports whether the runtime has a usable CUDA backend.
func deviceUsable(rt *Runtime) bool {
	for _, b := range rt.Backends() {
		if cb, ok := b.(*cuda.Backend); ok && cb.Available() == nil && cb.CheckPersistent() == nil {
			return true
		}
	}
	return false
}
