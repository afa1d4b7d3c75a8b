//go:build linux && cgo

package simdevice

import (
	"testing"

	"github.com/ringactor/ringactor/gpu/cuda"
)

// TestSimStreamSyncLeavesIdle: a cuStreamSynchronize of the simulated
// device that returns leaves the stream idle:
// cuStreamQuery right after it says CUDA_SUCCESS, every time. The stream
// used to count an op done only after waking the synchroniser, so a query
// in that window said CUDA_ERROR_NOT_READY (cuda.TestSimStreamQuery failed so
// in a CI run); many rounds hit the window.
func TestSimStreamSyncLeavesIdle(t *testing.T) {
	fd := NewDevice(1 << 20)
	s, err := fd.StreamCreate(cuda.StreamNonBlocking)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = fd.StreamDestroy(s) }()
	const rounds = 20000
	for i := range rounds {
		ops := 1 + i%3
		for range ops {
			if err := fd.Enqueue(s, func() error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
		if err := fd.StreamSynchronize(s); err != nil {
			t.Fatal(err)
		}
		if err := fd.StreamQuery(s); err != nil {
			t.Fatalf("round %d of %d: cuStreamQuery right after a synchronise returned: %v", i, rounds, err)
		}
	}
}
