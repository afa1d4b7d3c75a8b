package sensor

import (
	"bytes"
	"io"
	"testing"
)

// TestNoAllocationsPerRow checks that parsing, scaling and windowing a
// batch of rows allocates nothing per row once sensors and windows exist.
func TestNoAllocationsPerRow(t *testing.T) {
	g := DefaultSynthetic()
	g.Rows, g.BadEvery, g.Header, g.JitterMS = 4000, 0, false, 0
	var in bytes.Buffer
	if err := Generate(&in, g); err != nil {
		t.Fatal(err)
	}
	data := in.Bytes()
	cfg := Config{WindowMS: 1 << 40, Scale: 2, Offset: 1} // one window per sensor
	p := newPools(len(data))
	ps := &parser{window: cfg.WindowMS, pools: p, ids: make(map[string]uint32)}
	b := p.batch()
	ps.parse(data, 1, b) // interns the sensors
	if len(b.Rows) != g.Rows {
		t.Fatalf("%d rows, want %d", len(b.Rows), g.Rows)
	}
	names := b.NewNames
	allocs := testing.AllocsPerRun(20, func() {
		b.Rows = b.Rows[:0]
		ps.parse(data, 1, b)
	})
	if allocs != 0 {
		t.Errorf("parse: %v allocations per %d-row chunk, want 0", allocs, g.Rows)
	}

	rows := append([]Row(nil), b.Rows...)
	scale := newScaleHandler(cfg)
	w := &windower{w: cfg.WindowMS, pools: p, open: make(map[winKey]*agg)}
	ctx := testCtx(t)
	b.NewNames = names
	if _, err := w.handle(ctx, b); err != nil { // opens the windows
		t.Fatal(err)
	}
	allocs = testing.AllocsPerRun(20, func() {
		b.Rows = append(b.Rows[:0], rows...)
		if _, err := scale(ctx, b); err != nil {
			t.Fatal(err)
		}
		if _, err := w.handle(ctx, b); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 { // the Emit
		t.Errorf("scale and window: %v allocations per %d-row batch, want at most 1", allocs, g.Rows)
	}
}

// BenchmarkRun streams a 1M-row synthetic input through the whole pipeline,
// with and without lateness, and reports rows per second.
func BenchmarkRun(b *testing.B) {
	g := DefaultSynthetic()
	g.Rows, g.Sensors = 1_000_000, 64
	var in bytes.Buffer
	if err := Generate(&in, g); err != nil {
		b.Fatal(err)
	}
	data := in.Bytes()
	for _, streaming := range []bool{false, true} {
		name := "hold"
		if streaming {
			name = "lateness=1000"
		}
		b.Run(name, func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.Streaming, cfg.LatenessMS = streaming, 1000
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := Run(testCtx(b), cfg, bytes.NewReader(data), io.Discard, io.Discard, quiet()...); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(g.Rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkParse parses a chunk of 4000 synthetic rows (the unquoted fast
// path) and reports rows per second.
func BenchmarkParse(b *testing.B) {
	g := DefaultSynthetic()
	g.Rows, g.BadEvery, g.Header = 4000, 0, false
	var in bytes.Buffer
	if err := Generate(&in, g); err != nil {
		b.Fatal(err)
	}
	data := in.Bytes()
	p := newPools(len(data))
	ps := &parser{window: DefaultWindowMS, pools: p, ids: make(map[string]uint32)}
	batch := p.batch()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		batch.Rows = batch.Rows[:0]
		ps.parse(data, 1, batch)
	}
	b.ReportMetric(float64(g.Rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
