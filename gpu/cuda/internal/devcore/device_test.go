package devcore

import "testing"

// TestAttrsLaunchShapes checks the shapes come from the attributes.
func TestAttrsLaunchShapes(t *testing.T) {
	a := Attrs{SMs: 132, MaxThreadsPerBlock: 1024, MaxThreadsPerSM: 2048, MaxGridX: 1<<31 - 1, MaxGridY: 65535}
	if b := a.Block1D(); b != 256 {
		t.Errorf("H100 block = %d", b)
	}
	for _, c := range []struct {
		n    uint64
		want uint32
	}{{1, 1}, {256, 1}, {257, 2}, {1 << 30, 132 * 8}} {
		if g := a.Grid1D(c.n, 256); g != c.want {
			t.Errorf("Grid1D(%d) = %d, want %d", c.n, g, c.want)
		}
	}
	small := Attrs{SMs: 1, MaxThreadsPerBlock: 96, MaxThreadsPerSM: 96, MaxGridX: 3, MaxGridY: 1}
	if b := small.Block1D(); b != 64 {
		t.Errorf("Block1D with 96 threads = %d, want 64", b)
	}
	if g := small.Grid1D(1000, 64); g != 1 {
		t.Errorf("grid1D capped = %d, want 1", g)
	}
}
