//go:build linux && cgo

package sensor

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
)

// TestDeviceScaleMatchesCPU runs the scale stage's arithmetic through the
// device scale kernel, on the simulated device and as its fallback, and
// compares every value bit for bit with the CPU stage's.
func TestDeviceScaleMatchesCPU(t *testing.T) {
	sim := simdevice.NewBackend(64 << 20)
	t.Cleanup(func() { _ = sim.Close() })
	cfg := DefaultConfig()
	cfg.Scale, cfg.Offset = 1.0000001, -3.25
	rng := rand.New(rand.NewPCG(7, 14))
	for _, tc := range []struct {
		name  string
		opts  []actors.Option
		place string
	}{
		{"sim", append(quiet(), actors.WithBackends(sim)), "cuda:sim"},
		{"fallback", quiet(), actors.PlacementCPU},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, err := actors.NewRuntime(tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = rt.Close(context.Background()) })
			def, err := NewDeviceScaleKernel("scale-device")
			if err != nil {
				t.Fatal(err)
			}
			ctx := testCtx(t)
			dev, err := actors.Launch(ctx, rt, def)
			if err != nil {
				t.Fatal(err)
			}
			if err := dev.Activate(ctx); err != nil {
				t.Fatal(err)
			}
			defer dev.Terminate(context.Background())
			if dev.Placement() != tc.place {
				t.Skipf("placement %q, want %q (no host compiler?)", dev.Placement(), tc.place)
			}
			onDevice, onCPU := newDeviceScaleHandler(cfg, dev), newScaleHandler(cfg)
			for _, n := range []int{0, 1, 1023, 1024, 1025, 3000} {
				a, b := &Batch{Rows: make([]Row, n)}, &Batch{Rows: make([]Row, n)}
				for i := range n {
					v := rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
					switch i % 97 {
					case 1:
						v = math.Copysign(0, -1)
					case 2:
						v = 5e-324
					case 3:
						v = math.MaxFloat64 / 2
					}
					a.Rows[i] = Row{V: v, Line: int64(i)}
					b.Rows[i] = a.Rows[i]
				}
				if _, err := onDevice(ctx, a); err != nil {
					t.Fatal(err)
				}
				if _, err := onCPU(ctx, b); err != nil {
					t.Fatal(err)
				}
				for i := range n {
					if math.Float64bits(a.Rows[i].V) != math.Float64bits(b.Rows[i].V) || a.Rows[i].Line != b.Rows[i].Line {
						t.Fatalf("n %d row %d: device %v, CPU %v", n, i, a.Rows[i].V, b.Rows[i].V)
					}
				}
			}
		})
	}
}

// TestRunWithDeviceScale runs the whole pipeline with the scale stage on
// the simulated device and compares its output, rejects and counters with
// the CPU run's; OnStage says where each stage ran.
func TestRunWithDeviceScale(t *testing.T) {
	sim := simdevice.NewBackend(64 << 20)
	t.Cleanup(func() { _ = sim.Close() })
	in := messy{lines: 5000, seed: 14, header: true, crlf: 2, disorder: 3000}.generate()
	cfg := DefaultConfig()
	cfg.Scale, cfg.Offset = 0.3, -7.5
	wantOut, wantRej, wantSt := runString(t, cfg, strings.NewReader(in))
	var stages []string
	cfg.DeviceScale = true
	cfg.OnStage = func(stage, placement string) { stages = append(stages, stage+": "+placement) }
	var out, rej strings.Builder
	st, err := Run(testCtx(t), cfg, strings.NewReader(in), &out, &rej, append(quiet(), actors.WithBackends(sim))...)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(stages, ", ") != "parse: cpu, scale: cuda:sim, window: cpu, sink: cpu" {
		t.Fatalf("stages %v", stages)
	}
	if out.String() != wantOut || rej.String() != wantRej || st != wantSt {
		t.Fatalf("device run differs from the CPU run: stats %+v vs %+v", st, wantSt)
	}
}
