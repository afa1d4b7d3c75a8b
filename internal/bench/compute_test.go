package bench

import (
	"context"
	"testing"

	"github.com/ringactor/ringactor/actors"
)

func newRuntime(t *testing.T) *actors.Runtime {
	t.Helper()
	rt, err := actors.NewRuntime(actors.WithLogger(actors.DiscardLogger()), actors.WithTelemetry(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rt.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return rt
}

// TestComputeDefaults checks that a Config's zero compute fields take the
// defaults, which Quick and Full use as they are.
func TestComputeDefaults(t *testing.T) {
	got := Config{}.computeConfig()
	want := Config{ExecSamples: DefaultExecSamples, ElementwiseLen: DefaultElementwiseLen, ElementwiseSamples: DefaultElementwiseSamples,
		MatMulN: DefaultMatMulN, MatMulSamples: DefaultMatMulSamples}
	if got != want {
		t.Errorf("defaults = %+v, want %+v", got, want)
	}
	for name, cfg := range map[string]Config{"Quick": Quick, "Full": Full} {
		if cfg.computeConfig() != cfg {
			t.Errorf("%s leaves compute fields to the defaults: %+v", name, cfg)
		}
		if cfg.ElementwiseLen != 10_000_000 || cfg.MatMulN != 1024 || cfg.ElementwiseSamples != 5 || cfg.MatMulSamples != 3 {
			t.Errorf("%s does not measure what the JSON keys name (10M f32 median of 5, 1024 f64 median of 3): %+v", name, cfg)
		}
	}
}

// TestComputeMeasures runs each compute measurement once, small.
func TestComputeMeasures(t *testing.T) {
	rt := newRuntime(t)
	ctx := context.Background()
	exec, direct, err := ExecuteTinyRTT(ctx, rt, 10, 50)
	if err != nil {
		t.Fatal(err)
	}
	if len(exec) != 50 || len(direct) != 50 {
		t.Fatalf("%d and %d samples, want 50", len(exec), len(direct))
	}
	if perS, err := ExecutionsPerSecond(ctx, rt, 10, 100); err != nil || perS <= 0 {
		t.Fatalf("ExecutionsPerSecond = %v, %v", perS, err)
	}
	if allocs, err := executeAllocs(ctx, rt, 10); err != nil || allocs < 0 {
		t.Fatalf("executeAllocs = %v, %v", allocs, err)
	}
	if add, cp, err := ElementwiseVsCopy(ctx, rt, 1000, 3); err != nil || add <= 0 || cp <= 0 {
		t.Fatalf("ElementwiseVsCopy = %v, %v, %v", add, cp, err)
	}
	if mm, gemm, err := MatMulVsGemm(ctx, rt, 17, 1); err != nil || mm <= 0 || gemm <= 0 {
		t.Fatalf("MatMulVsGemm = %v, %v, %v", mm, gemm, err)
	}
}

// TestComputeCancelled checks that a cancelled context fails the
// measurements instead of reporting numbers.
func TestComputeCancelled(t *testing.T) {
	rt := newRuntime(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var res Result
	if err := Compute(ctx, rt, tiny, &res); err == nil {
		t.Fatal("Compute with a cancelled context succeeded")
	}
	if _, _, err := MatMulVsGemm(ctx, rt, 8, 1); err == nil {
		t.Fatal("MatMulVsGemm with a cancelled context succeeded")
	}
}
