//go:build linux && cgo

package hostsim

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ringactor/ringactor/gpu/cpu"
)

func randSlice[T float32 | float64](rng *rand.Rand, n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = T(rng.NormFloat64() * 10)
	}
	return s
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

func checkNear[T float32 | float64](t *testing.T, what string, got, want []T, tol float64) {
	t.Helper()
	for i := range want {
		if !near(float64(got[i]), float64(want[i]), tol) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func testElementwise[T float32 | float64](t *testing.T, tol float64) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 100, 1000} {
		a, b := randSlice[T](rng, n), randSlice[T](rng, n)
		got, want := make([]T, n), make([]T, n)
		const p = 0.25
		for op, ref := range map[int]func() error{
			OpAdd:       func() error { return cpu.Add(ctx, want, a, b) },
			OpSub:       func() error { return cpu.Sub(ctx, want, a, b) },
			OpMul:       func() error { return cpu.Mul(ctx, want, a, b) },
			OpScale:     func() error { return cpu.Scale(ctx, want, a, T(p)) },
			OpReLU:      func() error { return cpu.ReLU(ctx, want, a) },
			OpLeakyReLU: func() error { return cpu.LeakyReLU(ctx, want, a, T(p)) },
		} {
			if err := Elementwise(op, got, a, b, T(p), Launch1D{Grid: 3, Block: 8}); err != nil {
				t.Fatal(err)
			}
			if err := ref(); err != nil {
				t.Fatal(err)
			}
			checkNear(t, "elementwise", got, want, tol)
		}
	}
}

func testReduce[T float32 | float64](t *testing.T, tol float64) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 33, 5000} {
		a := randSlice[T](rng, n)
		for op, ref := range map[int]func(context.Context, []T) (T, error){
			OpSum: cpu.Sum[T], OpMin: cpu.Min[T], OpMax: cpu.Max[T],
		} {
			got, err := Reduce(op, a, Launch1D{Grid: 4, Block: 16})
			if err != nil {
				t.Fatal(err)
			}
			want, err := ref(ctx, a)
			if err != nil {
				t.Fatal(err)
			}
			if !near(got, float64(want), tol) {
				t.Fatalf("reduce op %d n %d = %v, want %v", op, n, got, want)
			}
		}
	}
	if _, err := Reduce(OpSum, []T{1}, Launch1D{Grid: 1, Block: 3}); err == nil {
		t.Fatal("a block of 3 threads was accepted")
	}
}

func testMatMul[T float32 | float64](t *testing.T, tol float64) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, d := range [][3]int{{1, 1, 1}, {5, 17, 3}, {33, 20, 18}} {
		m, k, n := d[0], d[1], d[2]
		a, b := randSlice[T](rng, m*k), randSlice[T](rng, k*n)
		got, want := make([]T, m*n), make([]T, m*n)
		if err := MatMul(got, a, b, m, k, n); err != nil {
			t.Fatal(err)
		}
		if err := cpu.MatMul(context.Background(), want, a, b, m, k, n); err != nil {
			t.Fatal(err)
		}
		checkNear(t, "matmul", got, want, tol*float64(k))
	}
}

func testBlur[T float32 | float64](t *testing.T, tol float64) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, s := range [][4]int{{1, 1, 1, 1}, {9, 13, 1, 2}, {8, 7, 3, 3}} {
		h, w, c, r := s[0], s[1], s[2], s[3]
		src := randSlice[T](rng, h*w*c)
		got, want := make([]T, len(src)), make([]T, len(src))
		if err := Blur(got, src, h, w, c, r, 1.5, Launch1D{Grid: 2, Block: 8}); err != nil {
			t.Fatal(err)
		}
		if err := cpu.GaussianBlur(context.Background(), want, src, h, w, c, r, 1.5); err != nil {
			t.Fatal(err)
		}
		checkNear(t, "blur", got, want, tol)
	}
}

// TestOneShot runs the one-shot kernels of kernels/oneshot.cu on the host
// and compares them with the CPU kernels of gpu/cpu.
func TestOneShot(t *testing.T) {
	t.Run("elementwise/f32", func(t *testing.T) { testElementwise[float32](t, 1e-6) })
	t.Run("elementwise/f64", func(t *testing.T) { testElementwise[float64](t, 1e-12) })
	t.Run("reduce/f32", func(t *testing.T) { testReduce[float32](t, 1e-5) })
	t.Run("reduce/f64", func(t *testing.T) { testReduce[float64](t, 1e-10) })
	t.Run("matmul/f32", func(t *testing.T) { testMatMul[float32](t, 1e-5) })
	t.Run("matmul/f64", func(t *testing.T) { testMatMul[float64](t, 1e-12) })
	t.Run("blur/f32", func(t *testing.T) { testBlur[float32](t, 1e-5) })
	t.Run("blur/f64", func(t *testing.T) { testBlur[float64](t, 1e-12) })
}
