package actors

import (
	"errors"
	"testing"

	"github.com/ringactor/ringactor/gpu"
)

// TestRuntimeMaxAllocation: an execution whose output is above the
// runtime's WithMaxAllocation limit fails with an error wrapping
// gpu.ErrOutOfMemory; one below it runs.
func TestRuntimeMaxAllocation(t *testing.T) {
	rt := newTestRuntime(t, WithMaxAllocation(1024))
	ctx := testCtx(t)
	small, err := rt.Execute(ctx, "add", bufs(f32(t, 1, 2), f32(t, 3, 4)), nil)
	if err != nil {
		t.Fatalf("small execution: %v", err)
	}
	small.Free()
	big := make([]float32, 512) // 2 KiB of output
	a, err := gpu.NewBuffer(big)
	if err != nil {
		t.Fatal(err)
	}
	b, err := gpu.NewBuffer(append([]float32(nil), big...))
	if err != nil {
		t.Fatal(err)
	}
	_, err = rt.Execute(ctx, "add", bufs(a, b), nil)
	var me *gpu.MemoryError
	if !errors.As(err, &me) || !errors.Is(err, gpu.ErrOutOfMemory) {
		t.Fatalf("err = %v, want a *gpu.MemoryError wrapping gpu.ErrOutOfMemory", err)
	}
}
