package sensor

import (
	"bytes"
	"io"
	"testing"

	"github.com/ringactor/ringactor/actors"
)

// TestGraphNoAllocationsPerRow checks that the stream graph (RunIn in one
// runtime, streaming windows) allocates nothing per row: a run of 160,000
// rows allocates no more than one of 40,000 but for some a chunk (each
// packet's send, its marks, the windows that open and close: some 7 a
// chunk measured, 16 allowed); one allocation a row would be 120,000 more.
// A run allocates its graph (stages, kernels, emitters) whatever its
// length, and a reject its reason, so the input has no bad or late rows.
func TestGraphNoAllocationsPerRow(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	ctx := testCtx(t)
	rt, err := actors.NewRuntime(quiet()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(ctx) })
	cfg := DefaultConfig()
	cfg.Streaming, cfg.LatenessMS = true, 200
	input := func(rows int) []byte {
		g := DefaultSynthetic()
		g.Rows, g.BadEvery, g.JitterMS = rows, 0, 0
		var in bytes.Buffer
		if err := Generate(&in, g); err != nil {
			t.Fatal(err)
		}
		return in.Bytes()
	}
	allocs := func(data []byte) float64 {
		run := func() {
			st, err := RunIn(ctx, rt, cfg, bytes.NewReader(data), io.Discard, io.Discard)
			if err != nil || st.Rejected != 0 {
				t.Fatalf("%+v, %v: want no rejects and no error", st, err)
			}
		}
		run() // the pools' first arrays
		return testing.AllocsPerRun(5, run)
	}
	const small, large = 40_000, 160_000
	a, b := allocs(input(small)), allocs(input(large))
	chunks := float64(len(input(large))) / float64(DefaultConfig().withDefaults().ChunkBytes)
	perRow := (b - a) / (large - small)
	t.Logf("%.0f allocations a run of %d rows, %.0f of %d (%.1f chunks): %.5f a row", a, small, b, large, chunks, perRow)
	if b-a > 16*chunks {
		t.Errorf("%.0f more allocations for %d more rows (%.1f chunks): want at most 16 a chunk, none a row", b-a, large-small, chunks)
	}
}
