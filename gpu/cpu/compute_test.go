package cpu

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"
)

type namedF32 float32 // exercises the ~float32 paths (kindOf, reinterpret)

// testLengths covers empty, tiny, non-multiples of the grain and lengths
// large enough to run in parallel (> 2*elemGrain, > redBlock).
var testLengths = []int{0, 1, 2, 7, 1000, 2*elemGrain - 1, 2*elemGrain + 1, 5*elemGrain + 13}

func isFloatT[T Number]() bool { k, _ := kindOf[T](); return k == kindFloat }

func randSlice[T Number](r *rand.Rand, n int) []T {
	s := make([]T, n)
	float := isFloatT[T]()
	for i := range s {
		if float {
			s[i] = T(r.NormFloat64() * 100)
		} else {
			s[i] = T(r.Uint64()) // full range, wraps into T
		}
	}
	return s
}

func isNaNT[T Number](x T) bool { return x != x }

func eqExact[T Number](t *testing.T, what string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: len %d, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] && !(isNaNT(got[i]) && isNaNT(want[i])) {
			t.Fatalf("%s: [%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func newRand() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

// ---- ParallelFor ----

func TestParallelForCoversOnce(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ n, grain int }{
		{0, 10}, {1, 1}, {5, 0}, {19, 10}, {20, 10}, {1000, 7}, {100003, 1000}, {1 << 20, 1 << 16},
	} {
		hits := make([]int32, tc.n)
		var calls atomic.Int32
		err := ParallelFor(ctx, tc.n, tc.grain, func(lo, hi int) {
			calls.Add(1)
			if lo >= hi || lo < 0 || hi > tc.n {
				t.Errorf("n=%d: bad chunk [%d,%d)", tc.n, lo, hi)
			}
			if g := max(tc.grain, 1); hi-lo < g && hi != tc.n {
				t.Errorf("n=%d grain=%d: chunk [%d,%d) below grain", tc.n, tc.grain, lo, hi)
			}
			for i := lo; i < hi; i++ {
				atomic.AddInt32(&hits[i], 1)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, h := range hits {
			if h != 1 {
				t.Fatalf("n=%d grain=%d: index %d hit %d times", tc.n, tc.grain, i, h)
			}
		}
		if tc.n > 0 && tc.n < 2*max(tc.grain, 1) && calls.Load() != 1 {
			t.Fatalf("n=%d grain=%d: %d calls, want 1 inline call", tc.n, tc.grain, calls.Load())
		}
	}
}

func TestParallelForCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	if err := ParallelFor(ctx, 10, 100, func(int, int) { called = true }); !errors.Is(err, context.Canceled) || called {
		t.Fatalf("pre-cancelled: err=%v called=%v", err, called)
	}

	// Cancelled by the first chunk: the worker that ran it checks the
	// context before taking another chunk, so the call must report it.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	var ran atomic.Int64
	err := ParallelFor(ctx, 1<<20, 1<<10, func(lo, hi int) {
		if lo == 0 {
			cancel()
		}
		ran.Add(int64(hi - lo))
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("mid-run cancel: err=%v", err)
	}
	if ran.Load() == 1<<20 {
		t.Logf("note: all chunks had been taken before the cancel was seen")
	}
}

func TestParallelForPanic(t *testing.T) {
	defer func() {
		if r := recover(); r != "boom" {
			t.Fatalf("recovered %v, want boom", r)
		}
	}()
	_ = ParallelFor(context.Background(), 1<<16, 1<<8, func(lo, hi int) {
		if lo <= 1000 && 1000 < hi {
			panic("boom")
		}
	})
	t.Fatal("no panic")
}

// ---- elementwise ----

func TestElementwise(t *testing.T) {
	t.Run("float32", testElementwise[float32])
	t.Run("float64", testElementwise[float64])
	t.Run("int32", testElementwise[int32])
	t.Run("int64", testElementwise[int64])
	t.Run("uint32", testElementwise[uint32])
	t.Run("uint8", testElementwise[uint8])
	t.Run("namedF32", testElementwise[namedF32])
}

func testElementwise[T Number](t *testing.T) {
	ctx := context.Background()
	r := newRand()
	for _, n := range testLengths {
		a, b := randSlice[T](r, n), randSlice[T](r, n)
		dst := make([]T, n)
		want := make([]T, n)
		scale := T(3)
		if isFloatT[T]() {
			f := 1.5
			scale = T(f)
		}
		ops := []struct {
			name string
			run  func() error
			ref  func(i int) T
		}{
			{"Add", func() error { return Add(ctx, dst, a, b) }, func(i int) T { return a[i] + b[i] }},
			{"Sub", func() error { return Sub(ctx, dst, a, b) }, func(i int) T { return a[i] - b[i] }},
			{"Mul", func() error { return Mul(ctx, dst, a, b) }, func(i int) T { return a[i] * b[i] }},
			{"Scale", func() error { return Scale(ctx, dst, a, scale) }, func(i int) T { return a[i] * scale }},
			{"ReLU", func() error { return ReLU(ctx, dst, a) }, func(i int) T { return max(a[i], 0) }},
		}
		for _, op := range ops {
			clear(dst)
			for i := range want {
				want[i] = op.ref(i)
			}
			if err := op.run(); err != nil {
				t.Fatalf("%s n=%d: %v", op.name, n, err)
			}
			eqExact(t, op.name, dst, want)
		}
		// dst aliasing a.
		c := append([]T(nil), a...)
		if err := Add(ctx, c, c, b); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			want[i] = a[i] + b[i]
		}
		eqExact(t, "Add aliased", c, want)
	}
	// Length mismatch.
	x := make([]T, 3)
	y := make([]T, 4)
	for name, err := range map[string]error{
		"Add":   Add(ctx, x, x, y),
		"Sub":   Sub(ctx, y, x, x),
		"Mul":   Mul(ctx, x, y, x),
		"Scale": Scale(ctx, x, y, 1),
		"ReLU":  ReLU(ctx, x, y),
	} {
		if !errors.Is(err, ErrKernelArgs) {
			t.Fatalf("%s mismatch: err=%v", name, err)
		}
	}
}

func TestLeakyReLU(t *testing.T) {
	t.Run("float32", testLeakyReLU[float32])
	t.Run("float64", testLeakyReLU[float64])
}

func testLeakyReLU[T Float](t *testing.T) {
	ctx := context.Background()
	r := newRand()
	for _, n := range testLengths {
		a := randSlice[T](r, n)
		dst := make([]T, n)
		if err := LeakyReLU(ctx, dst, a, 0.01); err != nil {
			t.Fatal(err)
		}
		for i, x := range a {
			want := x
			if x <= 0 {
				want = T(0.01) * x
			}
			if dst[i] != want {
				t.Fatalf("n=%d [%d]: %v, want %v", n, i, dst[i], want)
			}
		}
	}
	nan := T(math.NaN())
	dst := make([]T, 3)
	if err := LeakyReLU(ctx, dst, []T{nan, -2, 2}, 0.5); err != nil {
		t.Fatal(err)
	}
	if !isNaNT(dst[0]) || dst[1] != -1 || dst[2] != 2 {
		t.Fatalf("got %v", dst)
	}
	if err := LeakyReLU(ctx, dst, make([]T, 2), 0.5); !errors.Is(err, ErrKernelArgs) {
		t.Fatalf("mismatch: %v", err)
	}
}

func TestElementwiseOverflowAndNaN(t *testing.T) {
	ctx := context.Background()
	i32 := make([]int32, 1)
	if err := Add(ctx, i32, []int32{math.MaxInt32}, []int32{1}); err != nil || i32[0] != math.MinInt32 {
		t.Fatalf("int32 add: %v %v", i32, err)
	}
	u8 := make([]uint8, 1)
	if err := Add(ctx, u8, []uint8{250}, []uint8{10}); err != nil || u8[0] != 4 {
		t.Fatalf("uint8 add: %v %v", u8, err)
	}
	if err := Sub(ctx, u8, []uint8{3}, []uint8{5}); err != nil || u8[0] != 254 {
		t.Fatalf("uint8 sub: %v %v", u8, err)
	}
	if err := ReLU(ctx, u8, []uint8{200}); err != nil || u8[0] != 200 {
		t.Fatalf("uint8 relu: %v %v", u8, err)
	}
	// NaN in a large (parallel) input.
	n := 3 * elemGrain
	a := make([]float32, n)
	b := make([]float32, n)
	a[n-5] = float32(math.NaN())
	d := make([]float32, n)
	if err := Add(ctx, d, a, b); err != nil || !isNaNT(d[n-5]) || d[0] != 0 {
		t.Fatalf("NaN add: %v", err)
	}
	if err := ReLU(ctx, d, a); err != nil || !isNaNT(d[n-5]) {
		t.Fatalf("NaN relu: %v", err)
	}
	r := make([]float64, 3)
	if err := ReLU(ctx, r, []float64{math.NaN(), -1, 2}); err != nil || !math.IsNaN(r[0]) || r[1] != 0 || r[2] != 2 {
		t.Fatalf("relu: %v %v", r, err)
	}
}

// ---- reductions ----

func TestReductions(t *testing.T) {
	t.Run("float32", testReductions[float32])
	t.Run("float64", testReductions[float64])
	t.Run("int32", testReductions[int32])
	t.Run("int64", testReductions[int64])
	t.Run("uint32", testReductions[uint32])
	t.Run("uint8", testReductions[uint8])
	t.Run("namedF32", testReductions[namedF32])
}

func testReductions[T Number](t *testing.T) {
	ctx := context.Background()
	r := newRand()
	float := isFloatT[T]()
	for _, n := range append(testLengths, 3*redBlock+17) {
		a := randSlice[T](r, n)
		var wrap T
		var f64, abs float64
		for _, x := range a {
			wrap += x
			f64 += float64(x)
			abs += math.Abs(float64(x))
		}
		sum, err := Sum(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		if float {
			tol := 1e-12 * abs
			if _, size := kindOf[T](); size == 4 {
				tol = 1e-6*abs + 1e-30
			}
			if d := math.Abs(float64(sum) - f64); d > tol {
				t.Fatalf("Sum n=%d: %v, want %v (diff %g > %g)", n, sum, f64, d, tol)
			}
		} else if sum != wrap {
			t.Fatalf("Sum n=%d: %v, want %v", n, sum, wrap)
		}
		if n == 0 {
			if _, err := Min(ctx, a); !errors.Is(err, ErrKernelArgs) {
				t.Fatalf("Min empty: %v", err)
			}
			if _, err := Max(ctx, a); !errors.Is(err, ErrKernelArgs) {
				t.Fatalf("Max empty: %v", err)
			}
			if _, err := Mean(ctx, a); !errors.Is(err, ErrKernelArgs) {
				t.Fatalf("Mean empty: %v", err)
			}
			continue
		}
		mn, mx := a[0], a[0]
		for _, x := range a {
			mn = min(mn, x)
			mx = max(mx, x)
		}
		if got, err := Min(ctx, a); err != nil || got != mn {
			t.Fatalf("Min n=%d: %v %v, want %v", n, got, err, mn)
		}
		if got, err := Max(ctx, a); err != nil || got != mx {
			t.Fatalf("Max n=%d: %v %v, want %v", n, got, err, mx)
		}
		mean, err := Mean(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		if want := f64 / float64(n); math.Abs(mean-want) > 1e-12*abs/float64(n)+1e-300 {
			t.Fatalf("Mean n=%d: %v, want %v", n, mean, want)
		}
	}
}

func TestReductionSemantics(t *testing.T) {
	ctx := context.Background()
	if s, err := Sum(ctx, []int32{math.MaxInt32, 1}); err != nil || s != math.MinInt32 {
		t.Fatalf("int32 wrap: %v %v", s, err)
	}
	if s, err := Sum(ctx, []uint8{250, 10}); err != nil || s != 4 {
		t.Fatalf("uint8 wrap: %v %v", s, err)
	}
	if s, err := Sum(ctx, []float64{1, math.Inf(1), math.Inf(-1)}); err != nil || !math.IsNaN(s) {
		t.Fatalf("inf-inf: %v %v", s, err)
	}
	if s, err := Sum(ctx, []float32{}); err != nil || s != 0 {
		t.Fatalf("empty: %v %v", s, err)
	}
	if m, err := Mean(ctx, []uint8{255, 255, 0, 2}); err != nil || m != 128 {
		t.Fatalf("mean u8: %v %v", m, err)
	}
	nan := math.NaN()
	for _, n := range []int{1, 5, 3*redBlock + 17} {
		for _, pos := range []int{0, n / 2, n - 1} {
			a := make([]float64, n)
			for i := range a {
				a[i] = float64(i % 97)
			}
			a[pos] = nan
			mn, err1 := Min(ctx, a)
			mx, err2 := Max(ctx, a)
			s, err3 := Sum(ctx, a)
			mean, err4 := Mean(ctx, a)
			if err := errors.Join(err1, err2, err3, err4); err != nil {
				t.Fatal(err)
			}
			if !math.IsNaN(mn) || !math.IsNaN(mx) || !math.IsNaN(s) || !math.IsNaN(mean) {
				t.Fatalf("n=%d pos=%d: min=%v max=%v sum=%v mean=%v", n, pos, mn, mx, s, mean)
			}
		}
	}
}

func TestSumFloat32TenMillionOnes(t *testing.T) {
	a := make([]float32, 10_000_000)
	for i := range a {
		a[i] = 1
	}
	s, err := Sum(context.Background(), a)
	if err != nil || s != 1e7 {
		t.Fatalf("sum = %v, %v; want 1e7", s, err)
	}
	m, err := Mean(context.Background(), a)
	if err != nil || m != 1 {
		t.Fatalf("mean = %v, %v", m, err)
	}
}

// ---- MatMul ----

func TestMatMulKnown(t *testing.T) {
	ctx := context.Background()
	a := []float64{1, 2, 3, 4, 5, 6} // 2×3
	b := []float64{7, 8, 9, 10, 11, 12}
	c := make([]float64, 4)
	if err := MatMul(ctx, c, a, b, 2, 3, 2); err != nil {
		t.Fatal(err)
	}
	eqExact(t, "f64", c, []float64{58, 64, 139, 154})
	ci := make([]int32, 4)
	if err := MatMul(ctx, ci, []int32{1, 2, 3, 4, 5, 6}, []int32{7, 8, 9, 10, 11, 12}, 2, 3, 2); err != nil {
		t.Fatal(err)
	}
	eqExact(t, "i32", ci, []int32{58, 64, 139, 154})
	cf := make([]float32, 4)
	if err := MatMul(ctx, cf, []float32{1, 2, 3, 4, 5, 6}, []float32{7, 8, 9, 10, 11, 12}, 2, 3, 2); err != nil {
		t.Fatal(err)
	}
	eqExact(t, "f32", cf, []float32{58, 64, 139, 154})
	cu := make([]uint8, 1)
	if err := MatMul(ctx, cu, []uint8{16, 1}, []uint8{16, 4}, 1, 2, 1); err != nil || cu[0] != 4 { // 256+4 wraps to 4
		t.Fatalf("u8 wrap: %v %v", cu, err)
	}
}

func TestMatMul(t *testing.T) {
	t.Run("float32", testMatMul[float32])
	t.Run("float64", testMatMul[float64])
	t.Run("int32", testMatMul[int32])
	t.Run("int64", testMatMul[int64])
	t.Run("uint32", testMatMul[uint32])
	t.Run("uint8", testMatMul[uint8])
	t.Run("namedF32", testMatMul[namedF32])
}

func testMatMul[T Number](t *testing.T) {
	ctx := context.Background()
	r := newRand()
	float := isFloatT[T]()
	_, size := kindOf[T]()
	for _, d := range [][3]int{{1, 1, 1}, {3, 5, 2}, {17, 130, 33}, {64, 300, 270}, {200, 40, 9}} {
		m, k, n := d[0], d[1], d[2]
		a, b := randSlice[T](r, m*k), randSlice[T](r, k*n)
		if float {
			for i := range a {
				a[i] = T(r.Float64()*2 - 1)
			}
			for i := range b {
				b[i] = T(r.Float64()*2 - 1)
			}
		}
		c := make([]T, m*n)
		for i := range c {
			c[i] = 99 // must be overwritten
		}
		if err := MatMul(ctx, c, a, b, m, k, n); err != nil {
			t.Fatal(err)
		}
		for i := range m {
			for j := range n {
				var wrap T
				var f float64
				for p := range k {
					wrap += a[i*k+p] * b[p*n+j]
					f += float64(a[i*k+p]) * float64(b[p*n+j])
				}
				got := c[i*n+j]
				if !float {
					if got != wrap {
						t.Fatalf("%v [%d,%d] = %v, want %v", d, i, j, got, wrap)
					}
					continue
				}
				tol := 1e-12 * float64(k)
				if size == 4 {
					tol = 1e-5 * float64(k)
				}
				if math.Abs(float64(got)-f) > tol {
					t.Fatalf("%v [%d,%d] = %v, want %v", d, i, j, got, f)
				}
			}
		}
	}
	// k == 0 zeroes dst; m == 0 is a no-op.
	c := []T{1, 2, 3, 4}
	if err := MatMul(ctx, c, nil, nil, 2, 0, 2); err != nil {
		t.Fatal(err)
	}
	eqExact(t, "k=0", c, make([]T, 4))
	if err := MatMul[T](ctx, nil, nil, make([]T, 6), 0, 2, 3); err != nil {
		t.Fatal(err)
	}
	// Shape and alias errors.
	a, b := make([]T, 6), make([]T, 6)
	c = make([]T, 4)
	buf := make([]T, 16)
	for name, err := range map[string]error{
		"len a":     MatMul(ctx, c, a[:5], b, 2, 3, 2),
		"len b":     MatMul(ctx, c, a, b[:5], 2, 3, 2),
		"len dst":   MatMul(ctx, c[:3], a, b, 2, 3, 2),
		"negative":  MatMul(ctx, c, a, b, -2, -3, 2),
		"overflow":  MatMul(ctx, c, a, b, math.MaxInt/2, 3, 2),
		"alias a":   MatMul(ctx, buf[2:6], buf[0:6], b, 2, 3, 2),
		"alias b":   MatMul(ctx, buf[10:14], a, buf[8:14], 2, 3, 2),
		"dst==a":    MatMul(ctx, buf[:4], buf[:4], buf[4:8], 2, 2, 2),
		"dst==b":    MatMul(ctx, buf[4:8], buf[:4], buf[4:8], 2, 2, 2),
		"nil shape": MatMul[T](ctx, nil, nil, nil, 1, 1, 1),
	} {
		if !errors.Is(err, ErrKernelArgs) {
			t.Errorf("%s: err=%v", name, err)
		}
	}
	// a and b may alias each other.
	sq := []T{1, 2, 3, 4}
	c = make([]T, 4)
	if err := MatMul(ctx, c, sq, sq, 2, 2, 2); err != nil {
		t.Fatal(err)
	}
	eqExact(t, "A·A", c, []T{7, 10, 15, 22})
}

// ---- SpMV ----

func TestSpMV(t *testing.T) {
	t.Run("float32", testSpMV[float32])
	t.Run("float64", testSpMV[float64])
}

// randCSR builds a random rows×cols CSR matrix and its dense form.
func randCSR[T Float](r *rand.Rand, rows, cols int, density float64) (vals []T, colIdx, rowPtr []int32, dense []float64) {
	dense = make([]float64, rows*cols)
	rowPtr = make([]int32, rows+1)
	for i := range rows {
		for j := range cols {
			if r.Float64() < density {
				v := T(r.Float64()*2 - 1)
				vals = append(vals, v)
				colIdx = append(colIdx, int32(j))
				dense[i*cols+j] = float64(v)
			}
		}
		rowPtr[i+1] = int32(len(vals))
	}
	return
}

func testSpMV[T Float](t *testing.T) {
	ctx := context.Background()
	r := newRand()
	for _, d := range []struct {
		rows, cols int
		density    float64
	}{{0, 3, 0.5}, {1, 1, 1}, {5, 7, 0.4}, {300, 200, 0.1}, {5000, 800, 0.02}, {3000, 50, 0}} {
		vals, colIdx, rowPtr, dense := randCSR[T](r, d.rows, d.cols, d.density)
		x := make([]T, d.cols)
		for i := range x {
			x[i] = T(r.Float64()*2 - 1)
		}
		y := make([]T, d.rows)
		for i := range y {
			y[i] = 42
		}
		if err := SpMV(ctx, y, vals, colIdx, rowPtr, x); err != nil {
			t.Fatal(err)
		}
		for i := range d.rows {
			var want float64
			for j := range d.cols {
				want += dense[i*d.cols+j] * float64(x[j])
			}
			if math.Abs(float64(y[i])-want) > 1e-6*(1+math.Abs(want)) {
				t.Fatalf("%v row %d: %v, want %v", d, i, y[i], want)
			}
		}
	}
	// Validation: a 2×3 matrix [[1 0 2] [0 3 0]].
	vals := []T{1, 2, 3}
	cols := []int32{0, 2, 1}
	rp := []int32{0, 2, 3}
	x := []T{1, 1, 1}
	y := make([]T, 2)
	if err := SpMV(ctx, y, vals, cols, rp, x); err != nil || y[0] != 3 || y[1] != 3 {
		t.Fatalf("valid: %v %v", y, err)
	}
	for name, err := range map[string]error{
		"rowPtr len":        SpMV(ctx, y, vals, cols, []int32{0, 3}, x),
		"rowPtr empty":      SpMV(ctx, y, vals, cols, nil, x),
		"rowPtr[0]":         SpMV(ctx, y, vals, cols, []int32{1, 2, 3}, x),
		"rowPtr decreasing": SpMV(ctx, y, vals, cols, []int32{0, 3, 2}, x),
		"rowPtr last":       SpMV(ctx, y, vals, cols, []int32{0, 1, 2}, x),
		"len values":        SpMV(ctx, y, vals[:2], cols, rp, x),
		"len colIdx":        SpMV(ctx, y, vals, cols[:2], rp, x),
		"col negative":      SpMV(ctx, y, vals, []int32{0, -1, 1}, rp, x),
		"col too big":       SpMV(ctx, y, vals, []int32{0, 3, 1}, rp, x),
		"y aliases x":       SpMV(ctx, x[:2], vals, cols, rp, x),
	} {
		if !errors.Is(err, ErrKernelArgs) {
			t.Errorf("%s: err=%v", name, err)
		}
	}
	// A bad column in a large (parallel-checked) index array.
	const rows = 200_000
	rp = make([]int32, rows+1)
	cols = make([]int32, rows)
	vals = make([]T, rows)
	for i := range rows {
		rp[i+1] = int32(i + 1)
	}
	cols[rows-3] = 5
	if err := SpMV(ctx, make([]T, rows), vals, cols, rp, make([]T, 5)); !errors.Is(err, ErrKernelArgs) {
		t.Fatalf("large bad col: %v", err)
	}
}

// ---- GaussianBlur ----

// naiveBlur is the direct 2-D convolution with clamped borders.
func naiveBlur(src []float64, h, w, c, radius int, sigma float64) []float64 {
	wt := make([]float64, 2*radius+1)
	gaussWeights(wt, radius, sigma)
	out := make([]float64, len(src))
	for y := range h {
		for x := range w {
			for ch := range c {
				var s float64
				for dy := -radius; dy <= radius; dy++ {
					yy := min(max(y+dy, 0), h-1)
					for dx := -radius; dx <= radius; dx++ {
						xx := min(max(x+dx, 0), w-1)
						s += wt[dy+radius] * wt[dx+radius] * src[(yy*w+xx)*c+ch]
					}
				}
				out[(y*w+x)*c+ch] = s
			}
		}
	}
	return out
}

func TestGaussianBlur(t *testing.T) {
	t.Run("float32", testGaussianBlur[float32])
	t.Run("float64", testGaussianBlur[float64])
	t.Run("int32", testGaussianBlur[int32])
	t.Run("int64", testGaussianBlur[int64])
	t.Run("uint32", testGaussianBlur[uint32])
	t.Run("uint8", testGaussianBlur[uint8])
}

func testGaussianBlur[T Number](t *testing.T) {
	ctx := context.Background()
	r := newRand()
	float := isFloatT[T]()
	for _, d := range []struct{ h, w, c, radius int }{
		{1, 1, 1, 2}, {5, 4, 1, 1}, {9, 13, 3, 3}, {40, 37, 1, 5}, {3, 50, 2, 7}, {300, 301, 1, 2},
	} {
		size := d.h * d.w * d.c
		src := make([]T, size)
		srcF := make([]float64, size)
		for i := range src {
			src[i] = T(r.IntN(200))
			srcF[i] = float64(src[i])
		}
		want := naiveBlur(srcF, d.h, d.w, d.c, d.radius, 1.7)
		dst := make([]T, size)
		if err := GaussianBlur(ctx, dst, src, d.h, d.w, d.c, d.radius, 1.7); err != nil {
			t.Fatal(err)
		}
		tol := 1e-9
		if !float {
			tol = 0.5 + 1e-9 // rounding
		} else if _, s := kindOf[T](); s == 4 {
			tol = 1e-4
		}
		for i := range dst {
			if math.Abs(float64(dst[i])-want[i]) > tol {
				t.Fatalf("%v [%d] = %v, want %v", d, i, dst[i], want[i])
			}
		}
		// In place (dst aliases src) gives the same result.
		inPlace := append([]T(nil), src...)
		if err := GaussianBlur(ctx, inPlace, inPlace, d.h, d.w, d.c, d.radius, 1.7); err != nil {
			t.Fatal(err)
		}
		eqExact(t, "in place", inPlace, dst)
		// Radius 0 copies.
		cp := make([]T, size)
		if err := GaussianBlur(ctx, cp, src, d.h, d.w, d.c, 0, 1); err != nil {
			t.Fatal(err)
		}
		eqExact(t, "radius 0", cp, src)
	}

	// A constant image stays constant.
	for _, v := range []float64{0, 1, 77, 255} {
		h, w, c := 20, 31, 3
		src := make([]T, h*w*c)
		for i := range src {
			src[i] = T(v)
		}
		dst := make([]T, len(src))
		if err := GaussianBlur(ctx, dst, src, h, w, c, 4, 2.5); err != nil {
			t.Fatal(err)
		}
		for i, x := range dst {
			if float && math.Abs(float64(x)-v) > 1e-6 || !float && x != T(v) {
				t.Fatalf("constant %v: [%d] = %v", v, i, x)
			}
		}
	}

	// Channels are independent: c=3 equals three c=1 blurs.
	h, w, c := 17, 23, 3
	src := make([]T, h*w*c)
	for i := range src {
		src[i] = T(r.IntN(250))
	}
	dst := make([]T, len(src))
	if err := GaussianBlur(ctx, dst, src, h, w, c, 3, 1.2); err != nil {
		t.Fatal(err)
	}
	for ch := range c {
		plane := make([]T, h*w)
		for i := range plane {
			plane[i] = src[i*c+ch]
		}
		out := make([]T, h*w)
		if err := GaussianBlur(ctx, out, plane, h, w, 1, 3, 1.2); err != nil {
			t.Fatal(err)
		}
		for i := range out {
			if out[i] != dst[i*c+ch] {
				t.Fatalf("channel %d [%d]: %v vs %v", ch, i, out[i], dst[i*c+ch])
			}
		}
	}

	// Argument errors.
	img := make([]T, 12)
	for name, err := range map[string]error{
		"sigma 0":        GaussianBlur(ctx, img, img, 3, 4, 1, 1, 0),
		"sigma negative": GaussianBlur(ctx, img, img, 3, 4, 1, 1, -1),
		"sigma NaN":      GaussianBlur(ctx, img, img, 3, 4, 1, 1, math.NaN()),
		"sigma Inf":      GaussianBlur(ctx, img, img, 3, 4, 1, 1, math.Inf(1)),
		"sigma 0 r0":     GaussianBlur(ctx, img, img, 3, 4, 1, 0, 0),
		"radius":         GaussianBlur(ctx, img, img, 3, 4, 1, -1, 1),
		"shape":          GaussianBlur(ctx, img, img, 3, 3, 1, 1, 1),
		"channels":       GaussianBlur(ctx, img, img, 3, 4, 0, 1, 1),
		"dst len":        GaussianBlur(ctx, img[:11], img, 3, 4, 1, 1, 1),
		"negative h":     GaussianBlur(ctx, img, img, -3, -4, 1, 1, 1),
	} {
		if !errors.Is(err, ErrKernelArgs) {
			t.Errorf("%s: err=%v", name, err)
		}
	}
}

func TestGaussianBlurImpulse(t *testing.T) {
	t.Run("float32", testBlurImpulse[float32])
	t.Run("float64", testBlurImpulse[float64])
}

func testBlurImpulse[T Float](t *testing.T) {
	const h, w, r = 21, 25, 4
	src := make([]T, h*w)
	cy, cx := 10, 12
	src[cy*w+cx] = 1000
	dst := make([]T, len(src))
	if err := GaussianBlur(context.Background(), dst, src, h, w, 1, r, 1.5); err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, v := range dst {
		sum += float64(v)
	}
	tol := 1e-9
	if _, s := kindOf[T](); s == 4 {
		tol = 1e-3
	}
	if math.Abs(sum-1000) > tol {
		t.Fatalf("sum %v, want 1000", sum)
	}
	at := func(y, x int) float64 { return float64(dst[y*w+x]) }
	for dy := -r - 1; dy <= r+1; dy++ {
		for dx := -r - 1; dx <= r+1; dx++ {
			v := at(cy+dy, cx+dx)
			for _, m := range []float64{at(cy-dy, cx+dx), at(cy+dy, cx-dx), at(cy-dy, cx-dx), at(cy+dx, cx+dy)} {
				if math.Abs(v-m) > tol*1e-3 {
					t.Fatalf("asymmetric at (%d,%d): %v vs %v", dy, dx, v, m)
				}
			}
			if (dy < -r || dy > r || dx < -r || dx > r) && v != 0 {
				t.Fatalf("outside radius (%d,%d) = %v", dy, dx, v)
			}
		}
	}
	if at(cy, cx) <= at(cy, cx+1) || at(cy, cx+1) <= at(cy, cx+2) {
		t.Fatal("not decreasing away from the centre")
	}
}

func TestGaussianBlurSaturation(t *testing.T) {
	ctx := context.Background()
	// A u8 image with full-range contrast stays within 0..255 and its
	// saturated areas stay exactly 255 and 0.
	h, w := 16, 16
	src := make([]uint8, h*w)
	for y := range h {
		for x := range w {
			if x < w/2 {
				src[y*w+x] = 255
			}
		}
	}
	dst := make([]uint8, len(src))
	if err := GaussianBlur(ctx, dst, src, h, w, 1, 2, 3); err != nil {
		t.Fatal(err)
	}
	for y := range h {
		if dst[y*w] != 255 || dst[y*w+w-1] != 0 {
			t.Fatalf("row %d: edges %d %d", y, dst[y*w], dst[y*w+w-1])
		}
		for x := 1; x < w; x++ {
			if dst[y*w+x] > dst[y*w+x-1] {
				t.Fatalf("row %d not monotone at %d", y, x)
			}
		}
	}
	// The converter rounds half away from zero and saturates.
	u8 := newConverter[uint8]()
	i32 := newConverter[int32]()
	i64 := newConverter[int64]()
	u32 := newConverter[uint32]()
	for _, c := range []struct {
		got, want any
	}{
		{u8.conv(300), uint8(255)}, {u8.conv(-5), uint8(0)}, {u8.conv(254.5), uint8(255)}, {u8.conv(2.49), uint8(2)},
		{i32.conv(-2.5), int32(-3)}, {i32.conv(2.5), int32(3)}, {i32.conv(1e12), int32(math.MaxInt32)}, {i32.conv(-1e12), int32(math.MinInt32)},
		{i64.conv(1e19), int64(math.MaxInt64)}, {i64.conv(-1e19), int64(math.MinInt64)}, {i64.conv(-7.5), int64(-8)},
		{u32.conv(5e9), uint32(math.MaxUint32)}, {u32.conv(-0.4), uint32(0)},
	} {
		if c.got != c.want {
			t.Errorf("conv: %v (%T), want %v", c.got, c.got, c.want)
		}
	}
}

// ---- cancellation ----

func TestKernelsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	const n = 4 * elemGrain
	f := make([]float32, n)
	g := make([]float32, n)
	i := make([]int32, n)
	rp := make([]int32, n+1)
	errs := map[string]error{
		"Add":       Add(ctx, f, f, g),
		"Sub":       Sub(ctx, f, f, g),
		"Mul":       Mul(ctx, f, f, g),
		"Scale":     Scale(ctx, f, g, 2),
		"ReLU":      ReLU(ctx, i, i),
		"LeakyReLU": LeakyReLU(ctx, f, g, 0.1),
		"MatMulF":   MatMul(ctx, make([]float32, 512*512), f[:512*512], g[:512*512], 512, 512, 512),
		"MatMulI":   MatMul(ctx, make([]int32, 512*512), i[:512*512], i[:512*512], 512, 512, 512),
		"SpMV":      SpMV(ctx, make([]float32, n), nil, nil, rp, f),
		"Blur":      GaussianBlur(ctx, f, g, 512, 512, 1, 3, 1),
	}
	_, errs["Sum"] = Sum(ctx, f)
	_, errs["SumI"] = Sum(ctx, i)
	_, errs["Min"] = Min(ctx, f)
	_, errs["Max"] = Max(ctx, i)
	_, errs["Mean"] = Mean(ctx, f)
	for name, err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err=%v, want context.Canceled", name, err)
		}
	}

	// Cancellation in the middle of a parallel kernel.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	var once atomic.Bool
	big := make([]float64, 8*elemGrain)
	err := ParallelFor(ctx, len(big), elemGrain/4, func(lo, hi int) {
		if once.CompareAndSwap(false, true) {
			cancel()
		}
		_ = Scale(context.Background(), big[lo:hi], big[lo:hi], 2)
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("mid-run: %v", err)
	}
}
